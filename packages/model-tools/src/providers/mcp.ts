import type { RenderedResult } from '../render/render-result';
import type { DefinitionInput } from './definition-input';
import { callField, type ProviderToolCall } from './provider-call';

/** An MCP `Tool` (the entries of a `tools/list` result). */
export interface McpTool {
  readonly name: string;
  readonly title?: string;
  readonly description: string;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  readonly annotations: {
    readonly title?: string;
    readonly readOnlyHint: boolean;
    readonly destructiveHint: boolean;
    readonly idempotentHint: boolean;
    readonly openWorldHint: boolean;
  };
}

/** The params of a `tools/call` request. */
export interface McpCallToolParams {
  readonly name: string;
  readonly arguments?: Readonly<Record<string, unknown>>;
}

/** An MCP content block of a result. */
export type McpContent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly data: string; readonly mimeType: string }
  | {
      readonly type: 'resource_link';
      readonly uri: string;
      readonly name: string;
      readonly title?: string;
      readonly description?: string;
      readonly mimeType?: string;
    };

/** A `CallToolResult`. */
export interface McpCallToolResult {
  readonly content: readonly McpContent[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: true;
}

/** The `Tool`: schemas as they are, the capability as annotations (`readOnlyHint` is `!writes`). */
export function toMcpTool(input: DefinitionInput): McpTool {
  const { descriptor } = input;
  const capability = descriptor.capability;
  const title = typeof descriptor.annotations?.['title'] === 'string' ? (descriptor.annotations['title'] as string) : undefined;
  const schema = input.inputSchema['type'] === 'object' ? input.inputSchema : { type: 'object', ...input.inputSchema };
  const output = descriptor.outputSchema as Readonly<Record<string, unknown>> | undefined;
  const tool: McpTool = {
    name: input.providerName,
    ...(title === undefined ? {} : { title }),
    description: input.description,
    inputSchema: schema,
    ...(output !== undefined && typeof output === 'object' && output['type'] === 'object' ? { outputSchema: output } : {}),
    annotations: {
      ...(title === undefined ? {} : { title }),
      readOnlyHint: !capability.writes,
      destructiveHint: capability.destructive,
      idempotentHint: capability.idempotent,
      openWorldHint: capability.openWorld,
    },
  };
  return tool;
}

/**
 * Reads `tools/call` params.
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when they have no `name`.
 */
export function readMcpCall(call: unknown): ProviderToolCall {
  return {
    format: 'mcp',
    name: callField(call, ['name'], 'string', 'mcp') as string,
    callId: undefined,
    arguments: { value: callField(call, ['arguments'], 'any', 'mcp') ?? {} },
  };
}

/** The `CallToolResult`: text and image content, `structuredContent` for an object output, `isError` for a failure. */
export function toMcpCallToolResult(rendered: RenderedResult): McpCallToolResult {
  // A resource link a tool returned stays a link: the client reads it if it wants to.
  const content = rendered.parts.map((part): McpContent =>
    part.type === 'image'
      ? { type: 'image', data: part.data, mimeType: part.mimeType }
      : part.link === undefined
        ? { type: 'text', text: part.text }
        : { type: 'resource_link', ...part.link },
  );
  if (rendered.isError) return { content, isError: true };
  const structured = rendered.structured;
  if (typeof structured === 'object' && structured !== null && !Array.isArray(structured)) {
    return { content, structuredContent: structured as Readonly<Record<string, unknown>> };
  }
  return { content };
}
