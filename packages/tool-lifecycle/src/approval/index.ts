// The approval step (4½): the gate, the handler and store seams, the service's
// rules and their patterns, tool fingerprints and canonical JSON.
export { ApprovalGate } from './approval-gate';
export type { ApprovalGateSettings, ApprovalSubject, PlanCallsSource } from './approval-gate';
export { APPROVAL_HANDLER } from './approval-handler';
export type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalReason, ApprovalRequest, ApprovalScope } from './approval-handler';
export { approvalThroughInteraction } from './approval-interaction';
export type { ApprovalFormAnswer, ApprovalThroughInteractionOptions } from './approval-interaction';
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
