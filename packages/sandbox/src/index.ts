// The process runner: every program a tool starts, in its own process group.
export { runProcess, startProcess } from './process';
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
  CapturedOutput,
  ProcessLauncher,
  ProcessLaunch,
  PreparedLaunch,
  LaunchPipe,
  ProcessEnvironmentOptions,
  ProcessErrorCode,
  ProcessStartErrorOptions,
  ProcessOptionsErrorOptions,
  ProcessLaunchErrorOptions,
  ProcessLaunchStage,
} from './process';
export { MINIMAL_ENVIRONMENT_VARIABLES, buildProcessEnvironment, PROCESS_GROUPS_SUPPORTED, signalProcessGroup } from './process';
export { ProcessError, ProcessStartError, ProcessOptionsError, ProcessLaunchError } from './process';

// The kernel sandbox: a launcher of the runner that runs each program in bubblewrap.
export { createSandbox, sandboxOptionsForPlan, probeSandbox, resolveSandboxSettings } from './sandbox';
export type {
  CreateSandboxOptions,
  Sandbox,
  SandboxedPlan,
  ProbeSandboxOptions,
  SandboxSupport,
  ResolvedSandboxSettings,
  SandboxMode,
  SandboxSetting,
  SandboxSettings,
  SandboxLaunchOptions,
  SandboxLauncher,
  SandboxOverlay,
  SandboxWrites,
  OverlayChange,
  OverlayEntry,
  OverlaySkippedEntry,
  OverlayApplyHooks,
  OverlayTarget,
  SandboxErrorCode,
  SandboxUnavailableErrorOptions,
  SandboxSettingsErrorOptions,
  SandboxOverlayErrorOptions,
  SandboxOverlayStage,
} from './sandbox';
export { SandboxError, SANDBOX_INSTALL_COMMAND, SandboxUnavailableError, SandboxSettingsError, SandboxOverlayError } from './sandbox';
