// The PlanRegistry seam (plans across processes), its records, and the link
// that keeps a runtime's plans in a registry.
export { MAX_LISTED_APPROVALS, MAX_LISTED_TOOLS } from './plan-registry';
export type {
  PendingApprovalSummary,
  PlanApprovalMessage,
  PlanCancelMessage,
  PlanControlMessage,
  PlanMessageHandler,
  PlanProgress,
  PlanRegistration,
  PlanRegistry,
  PlanRegistryEntry,
  PlanRegistryOptions,
  PlanSendResult,
  RegisteredPlan,
} from './plan-registry';
export { PlanRegistryError } from './plan-registry-error';
export type { PlanRegistryErrorCode, PlanRegistryErrorOptions } from './plan-registry-error';
export {
  checkPlanControlMessage,
  checkPlanProgress,
  checkPlanRegistration,
  createApprovalMessage,
  createCancelMessage,
  parsePlanControlMessage,
  parseRegisteredPlan,
  planControlMessageKey,
  planIdProblem,
} from './plan-registry-records';
export type { PlanApprovalAnswer } from './plan-registry-records';
export { PlanRegistryLink, checkRegistryOption } from './plan-registry-link';
export type { PlanRegistryHooks } from './plan-registry-link';
