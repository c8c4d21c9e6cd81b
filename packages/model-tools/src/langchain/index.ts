export { createLangChainTools } from './langchain-tools';
export type { LangChainApprovalAnswer, LangChainApprovalRequest, LangChainToolsOptions } from './langchain-tools';
export { createLangChainApprovalMiddleware } from './approval-middleware';
export type { LangChainApprovalMiddleware, LangChainApprovalMiddlewareOptions } from './approval-middleware';
