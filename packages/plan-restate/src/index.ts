// Durable plans on Restate: a plan as a Restate workflow, each tool call a journaled step,
// approvals as durable promises answerable from any host, cancellation reaching the running tool.
export { createPlanWorkflow, statusObjectName } from './plan-workflow';
export type { DurablePlanFunction, DurablePlanRequest, DurableSteps, DurablePlanStatus, PlanWorkflow, PlanWorkflowSettings } from './plan-workflow';
export { DurableApprovalRouter, DurableApprovals } from './durable-approvals';
export type { DurableApprovalAnswer, DurableApprovalRequest } from './durable-approvals';
export { RestateCallJournal } from './restate-call-journal';
export { serveDurablePlans } from './serve-durable-plans';
export type { DurablePlanHost, ServeDurablePlansOptions } from './serve-durable-plans';
export { DurablePlanClient } from './durable-plan-client';
export type { DurablePlanClientSettings, DurablePlanSummary } from './durable-plan-client';
export { createJournalCodec } from './journal-codec';
export { DurablePlanError } from './durable-plan-error';
export type { DurablePlanErrorCode, DurablePlanErrorOptions } from './durable-plan-error';
