import type { RenderedResult } from '../render/render-result';
import type { DefinitionInput } from './definition-input';
import { callField, type ProviderToolCall } from './provider-call';

/** A client tool of the Anthropic Messages API (`tools[]`). */
export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: Readonly<Record<string, unknown>>;
  /** Left out of the model's context until a tool search returns a `tool_reference` to it. */
  readonly defer_loading?: true;
}

/** A `tool_use` content block of an assistant message. */
export interface AnthropicToolUse {
  readonly type: 'tool_use';
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** A block of a `tool_result`'s content. */
export type AnthropicToolResultContent =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'image'; readonly source: { readonly type: 'base64'; readonly media_type: string; readonly data: string } }
  | AnthropicToolReference;

/** A reference to a deferred tool in a tool search's result: the API loads the tool's definition in its place. */
export interface AnthropicToolReference {
  readonly type: 'tool_reference';
  readonly tool_name: string;
}

/** The `tool_result` block (in a user message) that answers a `tool_use`. */
export interface AnthropicToolResult {
  readonly type: 'tool_result';
  readonly tool_use_id: string;
  readonly content: string | readonly AnthropicToolResultContent[];
  readonly is_error?: true;
}

/** The tool definition: the input schema as it is (Anthropic takes JSON Schema; its root must be an object). */
export function toAnthropicTool(input: DefinitionInput): AnthropicTool {
  const schema = input.inputSchema['type'] === 'object' ? input.inputSchema : { type: 'object', properties: {}, ...input.inputSchema };
  return { name: input.providerName, description: input.description, input_schema: schema };
}

/**
 * Reads a `tool_use` block.
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when it lacks `id` or `name`.
 */
export function readAnthropicToolUse(call: unknown): ProviderToolCall {
  return {
    format: 'anthropic',
    name: callField(call, ['name'], 'string', 'anthropic') as string,
    callId: callField(call, ['id'], 'string', 'anthropic') as string,
    arguments: { value: callField(call, ['input'], 'any', 'anthropic') ?? {} },
  };
}

/** The `tool_result` block, `is_error: true` for a failure, images as base64 image blocks. */
export function toAnthropicToolResult(rendered: RenderedResult, call: ProviderToolCall): AnthropicToolResult {
  const hasImage = rendered.parts.some((part) => part.type === 'image');
  const content = hasImage
    ? rendered.parts.map((part): AnthropicToolResultContent =>
        part.type === 'text' ? { type: 'text', text: part.text } : { type: 'image', source: { type: 'base64', media_type: part.mimeType, data: part.data } },
      )
    : rendered.text;
  return rendered.isError
    ? { type: 'tool_result', tool_use_id: call.callId ?? '', content, is_error: true }
    : { type: 'tool_result', tool_use_id: call.callId ?? '', content };
}

/**
 * The `tool_result` of a custom tool search: one `tool_reference` per tool
 * found (each must be in the request's `tools` with `defer_loading: true`),
 * or a text saying nothing was found.
 */
export function toAnthropicToolSearchResult(call: ProviderToolCall, names: readonly string[], query: string): AnthropicToolResult {
  const content: AnthropicToolResultContent[] =
    names.length === 0
      ? [{ type: 'text', text: `No tool matched ${JSON.stringify(query.slice(0, 200))}. Try other words.` }]
      : names.map((name) => ({ type: 'tool_reference', tool_name: name }));
  return { type: 'tool_result', tool_use_id: call.callId ?? '', content };
}
