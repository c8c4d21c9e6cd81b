export { BuiltinToolSource, createBuiltinAdapter, registerBuiltinAdapter } from './builtin-tool-source';
export type {
  BuiltinAdapterSettings,
  BuiltinCommandSettings,
  BuiltinFileLimits,
  BuiltinHttpSettings,
  BuiltinToolName,
  BuiltinUndoSettings,
} from './builtin-adapter-settings';
export { BUILTIN_TOOL_NAMES } from './builtin-adapter-settings';
export { BuiltinToolError } from './builtin-tool-error';
export type { BuiltinToolErrorCode, BuiltinToolErrorOptions } from './builtin-tool-error';
export { createCheckpoint, rollback } from './checkpoint';
export type { BuiltinCheckpoint, RollbackReport } from './checkpoint';
export type { BuiltinFileState, BuiltinFileUndo } from './undo-store';
export type { HostResolver, ResolvedAddress } from './network-guard';
