/** A tool failure meant for the caller (isError), with a message that says what to do. */
export class ToolRefusal extends Error {
  override name = 'ToolRefusal';
}
