export { ModelTools } from './calls/model-tools';
export type {
  CallArguments,
  CallOptions,
  DefinitionsOptions,
  ModelTool,
  ModelToolCallOutcome,
  ModelToolCallResult,
  ModelToolsOptions,
  CodeModeOffer,
  PlanPolicySource,
  RunOptions,
  ToolsOptions,
} from './calls/model-tools';
export { DeferredTools, NATIVE_DEFERRED_FORMATS } from './deferred/deferred-tools';
export type { DeferredCallResult, DeferredDefinition, DeferredLoading, DeferredMessage, DeferredToolsOptions } from './deferred/deferred-tools';
export { FrameworkApprovals } from './approval/framework-approvals';
export type { FrameworkApproval, FrameworkApprovalsOptions, ProgramInnerCall } from './approval/framework-approvals';
export type { PendingProgramCall } from './approval/program-calls';
export { ModelToolsError } from './errors/model-tools-error';
export type { ModelToolsErrorCode, ModelToolsErrorOptions } from './errors/model-tools-error';
export { MODEL_TOOL_FORMATS, OPENAI_AGENTS_NAME_RULES, ToolNameMap, nameRulesOf } from './names/provider-names';
export type { ModelToolFormat, ProviderNameRules } from './names/provider-names';
export { REPAIR_RULES, repairArguments } from './repair/repair-arguments';
export type { ArgumentRepairs, DeclinedRepair, RepairOptions } from './repair/repair-arguments';
export { toOpenAiStrictSchema } from './schema/openai-strict-schema';
export type { StrictSchemaResult } from './schema/openai-strict-schema';
export { toGeminiSchema } from './schema/gemini-schema';
export type { GeminiSchemaResult } from './schema/gemini-schema';
export { modelErrorText } from './render/model-error';
export type { ModelErrorContext } from './render/model-error';
export type { RenderBudget, RenderedLink, RenderedPart, RenderedResult } from './render/render-result';
export type { HandleToolNames } from './render/render-handle';
export type { ProviderCall, ProviderDefinition, ProviderResult, ProviderShapes } from './providers/providers';
export type { ProviderToolCall } from './providers/provider-call';
export type { AnthropicTool, AnthropicToolReference, AnthropicToolResult, AnthropicToolResultContent, AnthropicToolUse } from './providers/anthropic';
export type { GeminiFunctionCall, GeminiFunctionDeclaration, GeminiFunctionResponsePart } from './providers/gemini';
export type { McpCallToolParams, McpCallToolResult, McpContent, McpTool } from './providers/mcp';
export type { OpenAiChatTool, OpenAiChatToolCall, OpenAiChatToolMessage } from './providers/openai-chat';
export type {
  OpenAiResponsesFunctionCall,
  OpenAiResponsesFunctionCallOutput,
  OpenAiResponsesFunctionTool,
  OpenAiResponsesOutputPart,
  OpenAiResponsesToolSearchCall,
  OpenAiResponsesToolSearchOutput,
  OpenAiResponsesToolSearchTool,
} from './providers/openai-responses';
