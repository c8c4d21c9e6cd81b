// tsyringe needs the Reflect metadata polyfill loaded before it; consumers need not remember it.
import 'reflect-metadata';

// What a tool and a source are.
export type { ToolDescriptor, ToolSandboxing, ToolInstance, ToolCallOptions, ToolProgress, ToolSource, UnavailableTool } from './tool';
export type { InterruptedToolCall, ToolReconciliation } from './tool';
export type { ToolContent, ToolSuccess, ToolFailure, ToolResult, ExecutionResult, ExecutionNote, ResultHandle, ToolSetSettings } from './tool';
export { toolSuccess, toolFailure, ToolSet, closestNames } from './tool';

// The runtime, its options and its registration.
export { ToolRuntime, innerCallStep } from './tool-runtime';
export type { ToolCaller } from './tool-runtime';
export type { ToolRuntimeOptions, ToolRuntimeSettings, ExecuteOptions, PlanOptions } from './tool-runtime';
export { registerToolRuntime } from './register-tool-runtime';

// Tool search over the catalog.
export { ToolSearchIndex, TOOL_SEARCH_RERANKER, ToolSearchError } from './search';
export { SEARCH_TOOL_NAME } from './search';
export type { ToolsSearchFound, ToolsSearchInput, ToolsSearchOutput } from './search';

// Outputs over the budget, behind handles.
export { MemoryResultStore, RESULT_STORE, ToolResultError, isResultHandle } from './results';
export type {
  MemoryResultStoreOptions,
  OutputBudgetOptions,
  ResultGrep,
  ResultGrepRequest,
  ResultRead,
  ResultReadRequest,
  ResultRecord,
  ResultStore,
  ResultSummary,
  ResultWriter,
  StoredResult,
  StoredResultFormat,
  ToolResultErrorOptions,
  ToolResultProblem,
} from './results';
export type {
  ToolRerankRequest,
  ToolSearchCandidate,
  ToolSearchHit,
  ToolSearchIndexSettings,
  ToolSearchMode,
  ToolSearchOptions,
  ToolSearchReranker,
  ToolSearchErrorOptions,
} from './search';
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

// The catalog and the plan.
export type { DiscoveryResult, SourceError } from './catalog';
export { ToolLifecycleCache, policyRefusal } from './plan';
export { capabilityInPlan } from './tool';
export type { ToolLifecycleCacheOptions, PlanEndReport } from './plan';

// Observability.
export type { RuntimeLogger, LogFields, LogLevel, RuntimeClock } from './observability';
export { createConsoleLogger, createRedactingLogger, silentLogger, systemClock } from './observability';
export { containerLogger } from './container-logger';

// Approval, rules, and the calls' retries and limits.
export { APPROVAL_HANDLER, APPROVAL_KEY, APPROVAL_STORE, FileApprovalStore, MemoryApprovalStore } from './approval';
export type { ApprovalContext, ApprovalDecision, ApprovalHandler, ApprovalReason, ApprovalRequest, ApprovalScope } from './approval';
export type { ApprovalRecord, ApprovalStore, FileApprovalStoreOptions, MemoryApprovalStoreOptions } from './approval';
export { compileToolRules, compileToolPattern, canonicalJson, fingerprintTool } from './approval';
export type { ArgumentMatcher, ToolRuleDecision, ToolRuleDefinition, ToolRuleExample, ToolRules, ToolRuleVerdict, PatternMatcher } from './approval';
export type { ToolCallSettings, ToolLimitSettings, ToolRetrySettings, ToolResumeSettings } from './calls';

// The call journal: calls recorded when decided and when ended, replayed instead of made twice.
export { MemoryCallJournal } from './journal';
export type {
  CallJournal,
  InterruptedCall,
  JournalCall,
  JournalEntry,
  JournaledError,
  JournalOutcome,
  JournalRecord,
  JournalReply,
  MemoryCallJournalOptions,
} from './journal';

// Hooks around every call.
export { TOOL_HOOK, DEFAULT_HOOK_TIMEOUT_MS, MAX_HOOK_NOTE_LENGTH } from './hooks';
export type { ToolHook, ToolHookContext, ToolBeforeDecision, ToolAfterDecision, ToolErrorDecision, ToolAfterCall, ToolFailedCall } from './hooks';

// Pinned tool definitions.
export { DEFINITION_PINS, MemoryDefinitionPins, pinDefinition, definitionDiff } from './pins';
export type { DefinitionLock, DefinitionPins, PinnedDefinition, PinnedToolDefinition } from './pins';

// Output guardrails on the after-hook.
export { createSecretRedactionHook, createInstructionCheckHook, INSTRUCTION_SIGNS } from './guardrails';
export type { SecretRedactionOptions, InstructionCheckOptions, SecretRule, SecretAllowlist } from './guardrails';

// Asking a person or a model.
export { INTERACTION_HANDLER, SAMPLING_HANDLER, approvalThroughInteraction } from './interaction';
export type { ApprovalFormAnswer, ApprovalThroughInteractionOptions } from './interaction';
export type {
  FormInteraction,
  InteractionContext,
  InteractionHandler,
  InteractionRequest,
  InteractionResponse,
  InteractionValues,
  UrlInteraction,
  SamplingContent,
  SamplingContext,
  SamplingHandler,
  SamplingMessage,
  SamplingModelPreferences,
  SamplingRequest,
  SamplingResult,
} from './interaction';

// Plans across processes.
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
  PlanRegistryErrorCode,
  PlanRegistryErrorOptions,
  PlanApprovalAnswer,
} from './plan-registry';
export { MAX_LISTED_APPROVALS, MAX_LISTED_TOOLS, PlanRegistryError } from './plan-registry';
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
} from './plan-registry';

// Errors.
export {
  ToolRuntimeError,
  ToolAccessDeniedError,
  ToolApprovalDeniedError,
  ToolLimitExceededError,
  ToolRuleError,
  ToolCheckpointRequiredError,
  ToolNotActivatedError,
  ToolActivationError,
  ToolExecutionError,
  ToolDeactivationError,
  ToolNotFoundError,
  ToolRegistrationError,
  ToolPlanEndedError,
  ToolInvalidArgumentError,
  ToolHookError,
  ToolHookRefusedError,
  ToolDefinitionChangedError,
  ToolJournalError,
  ToolOutcomeUnknownError,
} from './errors';
export type {
  ToolRuntimeErrorCode,
  ToolRuntimeErrorOptions,
  ToolAccessDeniedErrorOptions,
  ToolAccessDeniedRule,
  ToolApprovalDenial,
  ToolApprovalDeniedErrorOptions,
  ToolLimitExceededErrorOptions,
  ToolLimitKind,
  ToolRuleErrorOptions,
  ToolRuleProblem,
  ToolCheckpointRequiredErrorOptions,
  ToolNotActivatedErrorOptions,
  ToolActivationErrorOptions,
  ToolExecutionErrorOptions,
  ToolExecutionFailure,
  ToolDeactivationErrorOptions,
  ToolNotFoundErrorOptions,
  ToolRegistrationErrorOptions,
  ToolRegistrationProblem,
  DuplicateToolName,
  ToolPlanEndedErrorOptions,
  ToolInvalidArgumentErrorOptions,
  ToolHookErrorOptions,
  ToolHookFailure,
  ToolHookRefusedErrorOptions,
  ToolDefinitionChangedErrorOptions,
  ToolJournalErrorOptions,
  ToolJournalProblem,
  ToolOutcomeUnknownErrorOptions,
} from './errors';

// Moved to @ca/sandbox; kept here for one release (loads @ca/sandbox on first call).
export {
  /** @deprecated Moved to `@ca/sandbox`; removed from this entry in the release after this one. */
  PROCESS_GROUPS_SUPPORTED,
  /** @deprecated Moved to `@ca/sandbox`; removed from this entry in the release after this one. */
  signalProcessGroup,
} from './deprecated/process-group';
