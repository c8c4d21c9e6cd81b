import type { RenderedResult } from '../render/render-result';
import { toOpenAiStrictSchema } from '../schema/openai-strict-schema';
import { callField, type ProviderToolCall } from './provider-call';
import type { DefinitionInput } from './definition-input';

/** A function tool of the OpenAI Responses API (`tools[]` of `POST /v1/responses`). */
export interface OpenAiResponsesFunctionTool {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
  readonly strict: boolean;
  /** Loaded into the model's context by a tool search, not up front. */
  readonly defer_loading?: true;
}

/** The tool search tool, executed by the client (this package): the model asks, the client answers with the tools it loads. */
export interface OpenAiResponsesToolSearchTool {
  readonly type: 'tool_search';
  readonly execution: 'client';
  readonly description: string;
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** A `tool_search_call` output item of a client-executed tool search. */
export interface OpenAiResponsesToolSearchCall {
  readonly type: 'tool_search_call';
  readonly call_id: string;
  readonly execution: 'client';
  readonly arguments: unknown;
  readonly id?: string;
  readonly status?: string;
}

/** The `tool_search_output` input item that answers a `tool_search_call`: the definitions of the tools it loads. */
export interface OpenAiResponsesToolSearchOutput {
  readonly type: 'tool_search_output';
  readonly call_id: string;
  readonly execution: 'client';
  readonly status: 'completed';
  readonly tools: readonly OpenAiResponsesFunctionTool[];
}

/** A `function_call` output item of the Responses API. */
export interface OpenAiResponsesFunctionCall {
  readonly type: 'function_call';
  readonly call_id: string;
  readonly name: string;
  readonly arguments: string;
  readonly id?: string;
  readonly status?: string;
}

/** One part of a `function_call_output` that carries more than text. */
export type OpenAiResponsesOutputPart = { readonly type: 'input_text'; readonly text: string } | { readonly type: 'input_image'; readonly image_url: string };

/** The `function_call_output` input item that answers a call. */
export interface OpenAiResponsesFunctionCallOutput {
  readonly type: 'function_call_output';
  readonly call_id: string;
  readonly output: string | readonly OpenAiResponsesOutputPart[];
}

/** The tool definition: strict where the schema allows (see `toOpenAiStrictSchema`). */
export function toOpenAiResponsesTool(input: DefinitionInput): OpenAiResponsesFunctionTool {
  const converted = input.strict ? toOpenAiStrictSchema(input.inputSchema) : undefined;
  return {
    type: 'function',
    name: input.providerName,
    description: input.description,
    parameters: converted?.schema ?? input.inputSchema,
    strict: converted?.strict ?? false,
  };
}

/**
 * Reads a `function_call` item.
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when it lacks `name`, `call_id` or `arguments`.
 */
export function readOpenAiResponsesCall(call: unknown): ProviderToolCall {
  return {
    format: 'openai-responses',
    name: callField(call, ['name'], 'string', 'openai-responses') as string,
    callId: callField(call, ['call_id'], 'string', 'openai-responses') as string,
    arguments: { text: callField(call, ['arguments'], 'string', 'openai-responses') as string },
  };
}

/** The `function_call_output` item: text, or text and images (`input_image` data URLs). */
export function toOpenAiResponsesOutput(rendered: RenderedResult, call: ProviderToolCall): OpenAiResponsesFunctionCallOutput {
  const hasImage = rendered.parts.some((part) => part.type === 'image');
  const output = hasImage
    ? rendered.parts.map((part): OpenAiResponsesOutputPart =>
        part.type === 'text' ? { type: 'input_text', text: part.text } : { type: 'input_image', image_url: `data:${part.mimeType};base64,${part.data}` },
      )
    : rendered.text;
  return { type: 'function_call_output', call_id: call.callId ?? '', output };
}

/**
 * Reads a client `tool_search_call` item: its call id and arguments (an
 * object, or its JSON text).
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when it lacks `call_id`.
 */
export function readOpenAiResponsesToolSearchCall(call: unknown): ProviderToolCall {
  const args = callField(call, ['arguments'], 'any', 'openai-responses');
  return {
    format: 'openai-responses',
    name: 'tool_search',
    callId: callField(call, ['call_id'], 'string', 'openai-responses') as string,
    arguments: typeof args === 'string' ? { text: args } : { value: args ?? {} },
  };
}

/** The `tool_search_output` item: the found tools' definitions, deferred (they were loaded by the search). */
export function toOpenAiResponsesToolSearchOutput(call: ProviderToolCall, tools: readonly OpenAiResponsesFunctionTool[]): OpenAiResponsesToolSearchOutput {
  return {
    type: 'tool_search_output',
    call_id: call.callId ?? '',
    execution: 'client',
    status: 'completed',
    tools: tools.map((tool) => ({ ...tool, defer_loading: true as const })),
  };
}
