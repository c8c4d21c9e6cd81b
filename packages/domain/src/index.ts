export type { ToolSourceKind } from './tool-source-kind';
export { TOOL_SOURCE_KINDS, isToolSourceKind } from './tool-source-kind';
export type { ToolCapability, ToolCapabilityInput } from './tool-capability';
export { normalizeCapability, isCapabilityAtLeastAsStrict } from './tool-capability';
export type { JsonSchema, Validation } from './validation';
export type { Tool } from './tool';
export { MAX_TOOL_NAME_LENGTH, isValidToolName } from './tool';
