import { capabilityInPlan } from '@ca/tool-lifecycle';
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

/**
 * An MCP content block of a result: text and image, a resource link, or a
 * block the tool produced that passes as it is (audio, an embedded resource).
 */
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
    }
  | (Readonly<Record<string, unknown>> & { readonly type: string });

/** A `CallToolResult`. */
export interface McpCallToolResult {
  readonly content: readonly McpContent[];
  readonly structuredContent?: Readonly<Record<string, unknown>>;
  readonly isError?: true;
}

/**
 * Whether a tool can change anything in the plan: what it can do there
 * (`capabilityInPlan`: a sandboxed command writes nothing in a read-only
 * plan) says `writes` — and, for a tool whose programs run in the kernel
 * sandbox, the plan binds a writable resource (the sandbox lets it write
 * nothing else). Without a plan, its capability as declared.
 */
function writesInPlan(input: DefinitionInput): boolean {
  const { descriptor, plan } = input;
  if (plan === undefined) return descriptor.capability.writes;
  if (!capabilityInPlan(descriptor, plan.policy).writes) return false;
  if (descriptor.sandboxed === undefined) return true;
  return plan.resources === undefined || plan.resources.some((resource) => resource.access === 'write');
}

/**
 * The `Tool`: schemas as they are, the capability as annotations.
 * `readOnlyHint` is true only where the tool cannot write in the plan (see
 * {@link writesInPlan}); `destructiveHint` is then false, as MCP reads it.
 */
export function toMcpTool(input: DefinitionInput): McpTool {
  const { descriptor } = input;
  const capability = input.plan === undefined ? descriptor.capability : capabilityInPlan(descriptor, input.plan.policy);
  const writes = writesInPlan(input);
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
      readOnlyHint: !writes,
      destructiveHint: writes && capability.destructive,
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

/**
 * The `CallToolResult`: the content in order — text, images, and the blocks
 * that pass as they are (audio, embedded resources, resource links) —,
 * `structuredContent` for an object output, `isError` for a failure.
 */
export function toMcpCallToolResult(rendered: RenderedResult): McpCallToolResult {
  // A resource link a tool returned stays a link: the client reads it if it wants to.
  const content = rendered.parts.map((part): McpContent =>
    part.type === 'image'
      ? { type: 'image', data: part.data, mimeType: part.mimeType }
      : part.link !== undefined
        ? { type: 'resource_link', ...part.link }
        : ((part.block as McpContent | undefined) ?? { type: 'text', text: part.text }),
  );
  if (rendered.isError) return { content, isError: true };
  const structured = rendered.structured;
  if (typeof structured === 'object' && structured !== null && !Array.isArray(structured)) {
    return { content, structuredContent: structured as Readonly<Record<string, unknown>> };
  }
  return { content };
}
