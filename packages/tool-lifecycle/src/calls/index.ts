// The call step (5) and its outcome (6, 7): the call with its view and deadline,
// retries and limits, idempotency keys, calls with a step id through the journal
// and the resume rules, the output check.
export { CallLimiter } from './call-limiter';
export type { CallLimits, LimitSubject, LimitWaitPolicy } from './call-limiter';
export { CallRunner, executionsByView } from './call-runner';
export { CallSettings } from './call-settings';
export type { LimitPlan, RetryPlan, ToolCallPlan, ToolCallSettings, ToolLimitSettings, ToolRetrySettings } from './call-settings';
export type { ExecuteOptions } from './execute-options';
export { JournaledCalls } from './journaled-calls';
export type { JournaledCallsSettings } from './journaled-calls';
export { PlanCallRecords, PlanCalls } from './plan-calls';
export { ResumeRules } from './resume-rules';
export type { ResumeVerdict, ToolResumeSettings } from './resume-rules';
export { sleep, untilCancelled } from './until-cancelled';
