export { runProcess } from './run-process';
export { startProcess } from './start-process';
export type {
  ProcessSpawn,
  ProcessOptions,
  RunProcessOptions,
  StartProcessOptions,
  ProcessDurations,
  ProcessExit,
  ProcessResult,
  RunningProcess,
  RunningProcessCloseOptions,
} from './process-types';
export type { CapturedOutput } from './output-capture';
export type { ProcessLauncher, ProcessLaunch, PreparedLaunch, LaunchPipe } from './process-launcher';
export { MINIMAL_ENVIRONMENT_VARIABLES, buildProcessEnvironment } from './process-environment';
export type { ProcessEnvironmentOptions } from './process-environment';
export { PROCESS_GROUPS_SUPPORTED, signalProcessGroup } from './process-group';
export { ProcessError } from './process-error';
export type { ProcessErrorCode } from './process-error';
export { ProcessStartError } from './process-start-error';
export type { ProcessStartErrorOptions } from './process-start-error';
export { ProcessOptionsError } from './process-options-error';
export type { ProcessOptionsErrorOptions } from './process-options-error';
export { ProcessLaunchError } from './process-launch-error';
export type { ProcessLaunchErrorOptions, ProcessLaunchStage } from './process-launch-error';
