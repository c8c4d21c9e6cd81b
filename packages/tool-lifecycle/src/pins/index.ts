// Pinned tool definitions: a lock of every tool's fingerprint per source, and
// the quarantine of a tool whose definition no longer matches its pin.
export { DEFINITION_PINS, MemoryDefinitionPins, createDefinitionLock, definitionDiff, pinDefinition, quarantineCheck } from './definition-pins';
export type { DefinitionLock, DefinitionPins, PinnedDefinition, PinnedToolDefinition } from './definition-pins';
