// The hooks step: the service's own checks before a call (after input
// validation), after it and on its failure, each decision and time traced.
export { TOOL_HOOK } from './tool-hook';
export type { ToolAfterCall, ToolAfterDecision, ToolBeforeDecision, ToolErrorDecision, ToolFailedCall, ToolHook, ToolHookContext } from './tool-hook';
export { DEFAULT_HOOK_TIMEOUT_MS, HookPending, MAX_HOOK_NOTE_LENGTH, ToolHooks } from './tool-hooks';
export type { AppliedHooks } from './tool-hooks';
