// A plan: its context and the tokens it owns, its activations (the lifecycle
// cache), what the runtime keeps about its calls, and its policy (step 3).
export { checkPlanContext } from './check-plan-context';
export { createPlanContext } from './create-plan';
export type { PlanOptions } from './create-plan';
export { ToolLifecycleCache } from './lifecycle-cache';
export type { PlanEndReport, ToolLifecycleCacheOptions } from './lifecycle-cache';
export { enforcePolicy, policyRefusal } from './policy';
