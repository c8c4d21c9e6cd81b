/**
 * Which side of a tool call a schema checks: the `input` a caller passes
 * (`inputSchema`) or the `output` the tool returns (`outputSchema`).
 */
export type SchemaDirection = 'input' | 'output';

/** Names the schema property of a tool that belongs to `direction`, for messages. */
export function describeSchemaProperty(direction: SchemaDirection | undefined): string {
  if (direction === 'input') return "the tool's inputSchema";
  if (direction === 'output') return "the tool's outputSchema";
  return 'the schema';
}

/** `Tool 'x' input: ` / `Tool 'x': ` / `Input: ` / ``, the start of every message of this package. */
export function describeSubject(toolName: string | undefined, direction: SchemaDirection | undefined): string {
  if (toolName !== undefined && direction !== undefined) return `Tool '${toolName}' ${direction}: `;
  if (toolName !== undefined) return `Tool '${toolName}': `;
  if (direction !== undefined) return `${direction === 'input' ? 'Input' : 'Output'}: `;
  return '';
}
