// The approval step (4½): the gate, the handler and store seams, the service's
// rules and their patterns, tool fingerprints and canonical JSON.
export { ApprovalGate } from './approval-gate';
export type { ApprovalAnswer, ApprovalGateSettings, ApprovalSubject } from './approval-gate';
export type { PendingApprovalSummary } from './plan-approvals';
export { APPROVAL_HANDLER } from './approval-handler';
export type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalReason, ApprovalRequest, ApprovalScope } from './approval-handler';
export { APPROVAL_KEY, APPROVAL_STORE, MemoryApprovalStore } from './approval-store';
export type { ApprovalRecord, ApprovalStore, MemoryApprovalStoreOptions } from './approval-store';
export { FileApprovalStore } from './file-approval-store';
export type { FileApprovalStoreOptions } from './file-approval-store';
export { compileToolRules } from './tool-rules';
export type { ArgumentMatcher, ToolRuleDecision, ToolRuleDefinition, ToolRuleExample, ToolRules, ToolRuleVerdict } from './tool-rules';
export { compileToolPattern } from './tool-pattern';
export type { PatternMatcher } from './tool-pattern';
export { fingerprintTool } from './tool-fingerprint';
export { canonicalJson, digest } from './canonical-json';
