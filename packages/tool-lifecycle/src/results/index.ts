// Outputs over the budget: kept in a plan-scoped store behind a handle, read by range and searched
// by the runtime's own read-only tools, dropped when the plan ends.
export { MemoryResultStore } from './memory-result-store';
export type { MemoryResultStoreOptions } from './memory-result-store';
export { OutputBudget } from './output-budget';
export type { OutputBudgetOptions } from './output-budget';
export { ResultHandles, UNSTORED_TOOLS } from './result-handles';
export type { ResultGrep, ResultGrepRequest, ResultRead, ResultReadRequest } from './result-handles';
export { RESULT_STORE, isResultHandle } from './result-store';
export type { ResultRecord, ResultStore, ResultSummary, ResultWriter, StoredResult, StoredResultFormat } from './result-store';
export { createResultHandles, createRuntimeToolSet } from './runtime-tools';
export { ToolResultError } from './tool-result-error';
export type { ToolResultErrorOptions, ToolResultProblem } from './tool-result-error';
export { jsonShape, textPreview } from './result-preview';
export { redactText, redactedJson, redactedPieces } from './redact-document';
export { findPointer, pointerTokens } from './json-pointer-scan';
export { LineMarker } from './line-marks';
