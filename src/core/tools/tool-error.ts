/**
 * An error whose message a tool means the model and the user to read ("no such city", a division by zero, an MCP
 * server's error answer). Any other exception a tool throws is internal: the user and the model get a generic line
 * with a reference, and the message is logged with it (`publicToolError`).
 */
export class ToolError extends Error {
  override name = 'ToolError';
}
