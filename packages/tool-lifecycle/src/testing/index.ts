export { TestTool } from './test-tool';
export type { TestToolEvent, TestToolOptions } from './test-tool';
export { InMemoryToolSource } from './in-memory-tool-source';
export { RecordingLogger } from './recording-logger';
export type { LogEntry } from './recording-logger';
export { isProcessAlive, waitUntilProcessesGone } from './processes';
export { sandboxAvailableForTests } from './sandbox';
export { InMemoryPlanRegistry } from './in-memory-plan-registry';
export { PlainBm25 } from '../search/plain-bm25';
