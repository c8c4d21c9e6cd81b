export type { ApprovalCapability, PlanApprovalPolicy, PlanNetworkAccess, PlanPolicy } from './plan-policy';
export type { SandboxWrites, SandboxWritesOptions } from './plan-sandbox';
export { planAllowsNetwork, sandboxWritesForPlan } from './plan-sandbox';
export type { BoundResource, ResourceAccess, ResourceFromPathOptions } from './bound-resource';
export { resourceFromPath, resourcePath } from './bound-resource';
export type { Change, ChangeInput, ChangeKind } from './change';
export { CHANGE_KINDS } from './change';
export type {
  ToolApprovalOutcome,
  ToolExecutionTrace,
  ToolExecutionTraceApproval,
  ToolExecutionTraceError,
  ToolExecutionTraceRepair,
  ToolInputRepairRule,
} from './tool-execution-trace';
export { toTraceError, toTraceRepairs } from './tool-execution-trace';
export type { CancellationCheckDetails, CancellationTokenChildOptions, CancellationTokenOptions } from './cancellation-token';
export { CancellationToken } from './cancellation-token';
export type { ToolCancelledErrorOptions } from './tool-cancelled-error';
export { ToolCancelledError } from './tool-cancelled-error';
export type { ContextValidationErrorOptions } from './context-validation-error';
export { ContextValidationError } from './context-validation-error';
export type { ExecutionViewOptions, PlanContext, ToolExecutionContext, ToolExecutionContextOptions } from './execution-context';
export { createExecutionContext } from './execution-context';
export { createExecutionId } from './execution-id';
export type {
  ConfinePathRequest,
  ConfinedContent,
  ConfinedDescriptor,
  ConfinedDirectory,
  ConfinedFile,
  ConfinedPath,
  ConfinedWriteOptions,
  ConfinedWriteResult,
  ConfinementDetails,
  ConfinementRoot,
  ConfinementRootOptions,
} from './path-confinement';
export {
  confinePath,
  confinementRootsOf,
  fileTypeOf,
  isPathInside,
  openConfinedDirectory,
  openConfinedEntry,
  openConfinedFile,
  openConfinedParent,
  resolveConfinementRoot,
  resolveRealPath,
} from './path-confinement';
export type { ConfinedFileType, PathConfinementErrorCode, PathConfinementErrorOptions } from './path-confinement-error';
export { PathConfinementError } from './path-confinement-error';
