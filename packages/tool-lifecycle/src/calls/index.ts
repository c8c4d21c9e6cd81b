// The call step (5) and its outcome (6, 7): the call with its view and deadline,
// retries and limits, idempotency keys, explicit steps, the output check.
export { CallLimiter } from './call-limiter';
export type { CallLimits, LimitSubject, LimitWaitPolicy } from './call-limiter';
export { CallRunner } from './call-runner';
export { CallSettings } from './call-settings';
export type { LimitPlan, RetryPlan, ToolCallPlan, ToolCallSettings, ToolLimitSettings, ToolRetrySettings } from './call-settings';
export type { ExecuteOptions } from './execute-options';
export { PlanCallRecords, PlanCalls, RECORDED_RESULTS_PER_PLAN } from './plan-calls';
export type { RecordedResult } from './plan-calls';
export { recordStep, reserveStep } from './steps';
export type { ReplayedStep } from './steps';
export { sleep, untilCancelled } from './until-cancelled';
