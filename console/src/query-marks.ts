/**
 * Which of a search snippet's marks the page highlights. The API marks every word of the passage
 * that matches a query word by its stem, "the" and "of" included (src/spaces/search-snippet.ts);
 * a page of yellow "the"s hides the words the query is about, so the console leaves the common
 * English words unmarked, as search engines do. A query of nothing but such words ("to be or
 * not to be") keeps its marks: they are all it asked for.
 */

/**
 * A small English stop-word list (close to NLTK's): articles, pronouns, auxiliaries,
 * prepositions, conjunctions. Kept as the search's tokenizer writes words (src/spaces/
 * word-tokens.ts: runs of letters and digits, lower case), so "don't" is "don" and "t".
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'about', 'above', 'after', 'again', 'against', 'all', 'am', 'an', 'and', 'any', 'are', 'as', 'at',
  'be', 'because', 'been', 'before', 'being', 'below', 'between', 'both', 'but', 'by',
  'can', 'could', 'd', 'did', 'do', 'does', 'doing', 'don', 'down', 'during',
  'each', 'few', 'for', 'from', 'further', 'had', 'has', 'have', 'having', 'he', 'her', 'here', 'hers',
  'herself', 'him', 'himself', 'his', 'how', 'i', 'if', 'in', 'into', 'is', 'it', 'its', 'itself',
  'just', 'll', 'm', 'me', 'more', 'most', 'my', 'myself', 'no', 'nor', 'not', 'now',
  'o', 'of', 'off', 'on', 'once', 'only', 'or', 'other', 'our', 'ours', 'ourselves', 'out', 'over', 'own',
  're', 's', 'same', 'she', 'should', 'so', 'some', 'such', 't', 'than', 'that', 'the', 'their', 'theirs',
  'them', 'themselves', 'then', 'there', 'these', 'they', 'this', 'those', 'through', 'to', 'too',
  'under', 'until', 'up', 've', 'very', 'was', 'we', 'were', 'what', 'when', 'where', 'which', 'while',
  'who', 'whom', 'why', 'will', 'with', 'would', 'y', 'you', 'your', 'yours', 'yourself', 'yourselves',
]);

const MARKS = /\p{M}+/gu;
const SEPARATORS = /[^\p{L}\p{N}]+/u;

/** A word as the search's tokenizer folds it: compatibility forms and diacritics folded, lower case. */
function fold(text: string): string {
  return text.normalize('NFKD').replace(MARKS, '').toLowerCase();
}

/** Whether `word` (any case, accents and all) is one of STOP_WORDS. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(fold(word));
}

/** The words of a query as the search splits them (runs of letters and digits), folded. */
function queryWords(query: string): string[] {
  return fold(query).split(SEPARATORS).filter((word) => word !== '');
}

/**
 * The marks of `snippet` to highlight for `query`: the API's marks ([start, end) offsets into
 * the snippet) less those over a stop word, unless every word of the query is one.
 */
export function queryMarks(snippet: string, marks: readonly (readonly [number, number])[], query: string): (readonly [number, number])[] {
  const words = queryWords(query);
  if (words.every((word) => STOP_WORDS.has(word))) return [...marks];
  return marks.filter(([start, end]) => !isStopWord(snippet.slice(start, end)));
}
