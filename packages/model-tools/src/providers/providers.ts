import type { ModelToolFormat } from '../names/provider-names';
import type { RenderedResult } from '../render/render-result';
import { readAnthropicToolUse, toAnthropicTool, toAnthropicToolResult, type AnthropicTool, type AnthropicToolResult, type AnthropicToolUse } from './anthropic';
import type { DefinitionInput } from './definition-input';
import {
  readGeminiFunctionCall,
  toGeminiFunctionDeclaration,
  toGeminiFunctionResponse,
  type GeminiFunctionCall,
  type GeminiFunctionDeclaration,
  type GeminiFunctionResponsePart,
} from './gemini';
import { readMcpCall, toMcpCallToolResult, toMcpTool, type McpCallToolParams, type McpCallToolResult, type McpTool } from './mcp';
import {
  readOpenAiChatCall,
  toOpenAiChatTool,
  toOpenAiChatToolMessage,
  type OpenAiChatTool,
  type OpenAiChatToolCall,
  type OpenAiChatToolMessage,
} from './openai-chat';
import {
  readOpenAiResponsesCall,
  toOpenAiResponsesOutput,
  toOpenAiResponsesTool,
  type OpenAiResponsesFunctionCall,
  type OpenAiResponsesFunctionCallOutput,
  type OpenAiResponsesFunctionTool,
} from './openai-responses';
import type { ProviderToolCall } from './provider-call';

/** The shapes of each format: its tool definition, its tool call, and the message that answers the call. */
export interface ProviderShapes {
  'openai-responses': { definition: OpenAiResponsesFunctionTool; call: OpenAiResponsesFunctionCall; result: OpenAiResponsesFunctionCallOutput };
  'openai-chat': { definition: OpenAiChatTool; call: OpenAiChatToolCall; result: OpenAiChatToolMessage };
  anthropic: { definition: AnthropicTool; call: AnthropicToolUse; result: AnthropicToolResult };
  gemini: { definition: GeminiFunctionDeclaration; call: GeminiFunctionCall; result: GeminiFunctionResponsePart };
  mcp: { definition: McpTool; call: McpCallToolParams; result: McpCallToolResult };
}

export type ProviderDefinition<F extends ModelToolFormat> = ProviderShapes[F]['definition'];
export type ProviderCall<F extends ModelToolFormat> = ProviderShapes[F]['call'];
export type ProviderResult<F extends ModelToolFormat> = ProviderShapes[F]['result'];

interface Provider {
  define(input: DefinitionInput): unknown;
  read(call: unknown): ProviderToolCall;
  result(rendered: RenderedResult, call: ProviderToolCall): unknown;
}

/** The one file per format, behind one table. */
export const PROVIDERS: Readonly<Record<ModelToolFormat, Provider>> = Object.freeze({
  'openai-responses': { define: toOpenAiResponsesTool, read: readOpenAiResponsesCall, result: toOpenAiResponsesOutput },
  'openai-chat': { define: toOpenAiChatTool, read: readOpenAiChatCall, result: toOpenAiChatToolMessage },
  anthropic: { define: toAnthropicTool, read: readAnthropicToolUse, result: toAnthropicToolResult },
  gemini: { define: toGeminiFunctionDeclaration, read: readGeminiFunctionCall, result: toGeminiFunctionResponse },
  mcp: { define: toMcpTool, read: readMcpCall, result: (rendered: RenderedResult) => toMcpCallToolResult(rendered) },
});
