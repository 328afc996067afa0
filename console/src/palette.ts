/** Eight colours told apart with common colour blindness (Okabe–Ito, blue first): vehicles, clusters, labels. */
export const CATEGORY_COLOURS = ['#0072b2', '#d55e00', '#009e73', '#cc79a7', '#e69f00', '#56b4e9', '#000000', '#f0e442'];

export function categoryColour(index: number): string {
  return CATEGORY_COLOURS[index % CATEGORY_COLOURS.length]!;
}
