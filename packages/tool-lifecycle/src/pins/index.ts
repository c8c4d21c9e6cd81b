// Pinned tool definitions: a lock of every tool's fingerprint per pin scope,
// the quarantine of a tool whose definition no longer matches its pin, and its
// confirmation with the source before its first call.
export {
  DEFINITION_PINS,
  MemoryDefinitionPins,
  confirmPinnedDefinition,
  createDefinitionLock,
  definitionDiff,
  pinDefinition,
  pinScopeOf,
  quarantineCheck,
  upgradeDefinitionLock,
} from './definition-pins';
export type { DefinitionLock, DefinitionLockV1, DefinitionPins, PinnedDefinition, PinnedToolDefinition, PinVerdict } from './definition-pins';
