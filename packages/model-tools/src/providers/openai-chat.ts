import type { RenderedResult } from '../render/render-result';
import { toOpenAiStrictSchema } from '../schema/openai-strict-schema';
import type { DefinitionInput } from './definition-input';
import { callField, type ProviderToolCall } from './provider-call';

/** A function tool of the Chat Completions API (`tools[]` of `POST /v1/chat/completions`). */
export interface OpenAiChatTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description: string;
    readonly parameters: Readonly<Record<string, unknown>>;
    readonly strict: boolean;
  };
}

/** One entry of `choices[].message.tool_calls`. */
export interface OpenAiChatToolCall {
  readonly id: string;
  readonly type: 'function';
  readonly function: { readonly name: string; readonly arguments: string };
}

/** The `role: 'tool'` message that answers a call (text only: Chat Completions takes no images there). */
export interface OpenAiChatToolMessage {
  readonly role: 'tool';
  readonly tool_call_id: string;
  readonly content: string;
}

/** The tool definition: strict where the schema allows (see `toOpenAiStrictSchema`). */
export function toOpenAiChatTool(input: DefinitionInput): OpenAiChatTool {
  const converted = input.strict ? toOpenAiStrictSchema(input.inputSchema) : undefined;
  return {
    type: 'function',
    function: {
      name: input.providerName,
      description: input.description,
      parameters: converted?.schema ?? input.inputSchema,
      strict: converted?.strict ?? false,
    },
  };
}

/**
 * Reads one entry of `message.tool_calls`.
 * @throws ModelToolsError (`MODEL_TOOLS_INVALID_CALL`) when it lacks `id`, `function.name` or `function.arguments`.
 */
export function readOpenAiChatCall(call: unknown): ProviderToolCall {
  return {
    format: 'openai-chat',
    name: callField(call, ['function', 'name'], 'string', 'openai-chat') as string,
    callId: callField(call, ['id'], 'string', 'openai-chat') as string,
    arguments: { text: callField(call, ['function', 'arguments'], 'string', 'openai-chat') as string },
  };
}

/** The tool message; images become a note in the text. */
export function toOpenAiChatToolMessage(rendered: RenderedResult, call: ProviderToolCall): OpenAiChatToolMessage {
  return { role: 'tool', tool_call_id: call.callId ?? '', content: rendered.text };
}
