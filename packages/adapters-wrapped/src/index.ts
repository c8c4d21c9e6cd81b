export type { RetryFailure, RetryOptions, WrapExecuteMiddleware, WrapExecuteNext, WrapToolOptions } from './wrap-tool';
export { wrapTool } from './wrap-tool';
export type { ForeignToolKind, ForeignToolOptions } from './foreign-tool';
export type { JsonSchemaConverter } from './foreign-schema';
export type { FromFunctionOptions, FunctionToolContext, ToolFunction } from './from-function';
export { fromFunction } from './from-function';
export type { AiSdkToolExecutionOptions, AiSdkToolLike, FromAiSdkToolOptions } from './from-ai-sdk-tool';
export { fromAiSdkTool } from './from-ai-sdk-tool';
export type { FromLangChainToolOptions, LangChainInvokeConfig, LangChainToolLike } from './from-langchain-tool';
export { fromLangChainTool } from './from-langchain-tool';
export type { WrappedAdapterSettings, WrappedToolFactory } from './wrapped-tool-source';
export { WrappedToolSource, createWrappedAdapter } from './wrapped-tool-source';
export { registerWrappedAdapter } from './register-wrapped-adapter';
export type {
  LoosenedCapability,
  SchemaUnconvertibleReason,
  WrapSchemaRole,
  WrapSubject,
  WrappedEntryPoint,
  WrappedToolErrorCode,
  WrappedToolErrorOptions,
  WrappedToolProblem,
} from './wrapped-tool-error';
export { WrappedToolError } from './wrapped-tool-error';
