// tsyringe needs the Reflect metadata polyfill loaded before it; consumers need not remember it.
import 'reflect-metadata';

export type { ToolDescriptor } from './tool-descriptor';
export type { ToolInstance, ToolCallOptions, ToolProgress } from './tool-instance';
export type { ToolSource, UnavailableTool } from './tool-source';
export type { ToolContent, ToolSuccess, ToolFailure, ToolResult, ExecutionResult } from './tool-result';
export { toolSuccess, toolFailure } from './tool-result';
export type { RuntimeLogger, LogFields, LogLevel } from './runtime-logger';
export { createConsoleLogger, createRedactingLogger, silentLogger } from './runtime-logger';
export type { RuntimeClock } from './runtime-clock';
export { systemClock } from './runtime-clock';
export { ToolLifecycleCache } from './lifecycle-cache';
export type { ToolLifecycleCacheOptions, PlanEndReport } from './lifecycle-cache';
export { ToolRuntime } from './tool-runtime';
export type { ToolRuntimeOptions, ToolRuntimeSettings, ExecuteOptions, PlanOptions } from './tool-runtime';
export type { DiscoveryResult, SourceError } from './tool-catalog';
export { ToolSet } from './tool-set';
export { ToolSearchIndex, TOOL_SEARCH_RERANKER } from './search/tool-search';
export type {
  ToolRerankRequest,
  ToolSearchCandidate,
  ToolSearchHit,
  ToolSearchIndexSettings,
  ToolSearchMode,
  ToolSearchOptions,
  ToolSearchReranker,
} from './search/tool-search';
export { ToolSearchError } from './search/tool-search-error';
export type { ToolSearchErrorOptions } from './search/tool-search-error';
export { policyRefusal } from './policy';
export type { ToolSetSettings } from './tool-set';
export { closestNames } from './closest-names';
export { registerToolRuntime } from './register-tool-runtime';
export { APPROVAL_HANDLER } from './approval-handler';
export type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalReason, ApprovalRequest, ApprovalScope } from './approval-handler';
export { approvalThroughInteraction } from './approval-interaction';
export type { ApprovalFormAnswer, ApprovalThroughInteractionOptions } from './approval-interaction';
export { APPROVAL_KEY, APPROVAL_STORE, MemoryApprovalStore } from './approval-store';
export type { ApprovalRecord, ApprovalStore, MemoryApprovalStoreOptions } from './approval-store';
export { compileToolRules } from './tool-rules';
export type { ArgumentMatcher, ToolRuleDecision, ToolRuleDefinition, ToolRuleExample, ToolRules, ToolRuleVerdict } from './tool-rules';
export { compileToolPattern } from './tool-pattern';
export type { PatternMatcher } from './tool-pattern';
export type { ToolCallSettings, ToolLimitSettings, ToolRetrySettings } from './call-settings';
export { canonicalJson } from './canonical-json';
export { fingerprintTool } from './tool-fingerprint';
export { INTERACTION_HANDLER } from './interaction-handler';
export type {
  FormInteraction,
  InteractionContext,
  InteractionHandler,
  InteractionRequest,
  InteractionResponse,
  InteractionValues,
  UrlInteraction,
} from './interaction-handler';
export { SAMPLING_HANDLER } from './sampling-handler';
export type {
  SamplingContent,
  SamplingContext,
  SamplingHandler,
  SamplingMessage,
  SamplingModelPreferences,
  SamplingRequest,
  SamplingResult,
} from './sampling-handler';
export { PROCESS_GROUPS_SUPPORTED, signalProcessGroup } from './process/process-group';
export {
  TOOL_SOURCE,
  SCHEMA_VALIDATOR,
  RUNTIME_LOGGER,
  RUNTIME_CLOCK,
  TOOL_RUNTIME_OPTIONS,
  TOOL_LIFECYCLE_CACHE,
  TOOL_RUNTIME,
  PLAN_REGISTRY,
} from './tokens';
export type {
  PlanRegistry,
  PlanRegistryEntry,
  PlanRegistration,
  PlanRegistryOptions,
  PlanProgress,
  RegisteredPlan,
  PlanControlMessage,
  PlanCancelMessage,
  PlanApprovalMessage,
  PendingApprovalSummary,
  PlanMessageHandler,
  PlanSendResult,
} from './plan-registry/plan-registry';
export { MAX_LISTED_APPROVALS, MAX_LISTED_TOOLS } from './plan-registry/plan-registry';
export { PlanRegistryError } from './plan-registry/plan-registry-error';
export type { PlanRegistryErrorCode, PlanRegistryErrorOptions } from './plan-registry/plan-registry-error';
export {
  checkPlanRegistration,
  checkPlanControlMessage,
  checkPlanProgress,
  createApprovalMessage,
  createCancelMessage,
  parsePlanControlMessage,
  parseRegisteredPlan,
  planControlMessageKey,
  planIdProblem,
} from './plan-registry/plan-registry-records';
export type { PlanApprovalAnswer } from './plan-registry/plan-registry-records';
export { ToolRuntimeError } from './errors/tool-runtime-error';
export type { ToolRuntimeErrorCode, ToolRuntimeErrorOptions } from './errors/tool-runtime-error';
export { ToolAccessDeniedError } from './errors/tool-access-denied-error';
export type { ToolAccessDeniedErrorOptions, ToolAccessDeniedRule } from './errors/tool-access-denied-error';
export { ToolApprovalDeniedError } from './errors/tool-approval-denied-error';
export type { ToolApprovalDenial, ToolApprovalDeniedErrorOptions } from './errors/tool-approval-denied-error';
export { ToolLimitExceededError } from './errors/tool-limit-exceeded-error';
export type { ToolLimitExceededErrorOptions, ToolLimitKind } from './errors/tool-limit-exceeded-error';
export { ToolRuleError } from './errors/tool-rule-error';
export type { ToolRuleErrorOptions, ToolRuleProblem } from './errors/tool-rule-error';
export { ToolCheckpointRequiredError } from './errors/tool-checkpoint-required-error';
export type { ToolCheckpointRequiredErrorOptions } from './errors/tool-checkpoint-required-error';
export { ToolNotActivatedError } from './errors/tool-not-activated-error';
export type { ToolNotActivatedErrorOptions } from './errors/tool-not-activated-error';
export { ToolActivationError } from './errors/tool-activation-error';
export type { ToolActivationErrorOptions } from './errors/tool-activation-error';
export { ToolExecutionError } from './errors/tool-execution-error';
export type { ToolExecutionErrorOptions, ToolExecutionFailure } from './errors/tool-execution-error';
export { ToolDeactivationError } from './errors/tool-deactivation-error';
export type { ToolDeactivationErrorOptions } from './errors/tool-deactivation-error';
export { ToolNotFoundError } from './errors/tool-not-found-error';
export type { ToolNotFoundErrorOptions } from './errors/tool-not-found-error';
export { ToolRegistrationError } from './errors/tool-registration-error';
export type { DuplicateToolName, ToolRegistrationErrorOptions, ToolRegistrationProblem } from './errors/tool-registration-error';
export { ToolPlanEndedError } from './errors/tool-plan-ended-error';
export type { ToolPlanEndedErrorOptions } from './errors/tool-plan-ended-error';
export { ToolInvalidArgumentError } from './errors/tool-invalid-argument-error';
export type { ToolInvalidArgumentErrorOptions } from './errors/tool-invalid-argument-error';
