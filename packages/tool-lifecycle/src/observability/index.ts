// What the runtime leaves behind: one trace per execution, OpenTelemetry spans,
// logs through the injected logger, on the injected clock.
export { extraOf } from './execution';
export type { Execution, ExecutionExtra } from './execution';
export { ExecutionRecorder } from './execution-recorder';
export { systemClock } from './runtime-clock';
export type { RuntimeClock } from './runtime-clock';
export { createConsoleLogger, createRedactingLogger, silentLogger } from './runtime-logger';
export type { LogFields, LogLevel, RuntimeLogger } from './runtime-logger';
export { activeTracer, endToolSpan, startToolSpan } from './telemetry';
export { TraceClock } from './trace-clock';
