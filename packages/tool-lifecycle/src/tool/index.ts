// What a tool and a source are: the contract every adapter implements.
export { capabilityInPlan } from './capability-in-plan';
export { closestNames } from './closest-names';
export type { ToolDescriptor, ToolSandboxing } from './tool-descriptor';
export type { InterruptedToolCall, ToolCallOptions, ToolInstance, ToolProgress, ToolReconciliation } from './tool-instance';
export { toolFailure, toolSuccess } from './tool-result';
export type { ExecutionNote, ExecutionResult, ResultHandle, ToolContent, ToolFailure, ToolResult, ToolSuccess } from './tool-result';
export { ToolSet } from './tool-set';
export type { ToolSetSettings } from './tool-set';
export type { ToolSource, UnavailableTool } from './tool-source';
