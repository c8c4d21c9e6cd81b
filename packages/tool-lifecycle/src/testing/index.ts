export { TestTool } from './test-tool';
export type { TestToolEvent, TestToolOptions } from './test-tool';
export { InMemoryToolSource } from './in-memory-tool-source';
export { RecordingLogger } from './recording-logger';
export type { LogEntry } from './recording-logger';
export { isProcessAlive, waitUntilProcessesGone, sandboxAvailableForTests } from '../deprecated/process-testing';
export { InMemoryPlanRegistry } from './in-memory-plan-registry';
export { PlainBm25 } from '../search';
