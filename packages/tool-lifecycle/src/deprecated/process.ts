// `@ca/tool-lifecycle/process`: the process runner moved to `@ca/sandbox`. These names are
// re-exported from there for one release, so that importing this subpath needs
// `@ca/sandbox` installed (an optional peer of this package). The subpath is
// removed in the release after this one: import from `@ca/sandbox` instead.
export {
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `runProcess` from there. The subpath is removed in the release after this one. */
  runProcess,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `startProcess` from there. The subpath is removed in the release after this one. */
  startProcess,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `MINIMAL_ENVIRONMENT_VARIABLES` from there. The subpath is removed in the release after this one. */
  MINIMAL_ENVIRONMENT_VARIABLES,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `buildProcessEnvironment` from there. The subpath is removed in the release after this one. */
  buildProcessEnvironment,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `PROCESS_GROUPS_SUPPORTED` from there. The subpath is removed in the release after this one. */
  PROCESS_GROUPS_SUPPORTED,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `signalProcessGroup` from there. The subpath is removed in the release after this one. */
  signalProcessGroup,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessError` from there. The subpath is removed in the release after this one. */
  ProcessError,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessStartError` from there. The subpath is removed in the release after this one. */
  ProcessStartError,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessOptionsError` from there. The subpath is removed in the release after this one. */
  ProcessOptionsError,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessLaunchError` from there. The subpath is removed in the release after this one. */
  ProcessLaunchError,
} from '@ca/sandbox';
export type {
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessSpawn` from there. The subpath is removed in the release after this one. */
  ProcessSpawn,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessOptions` from there. The subpath is removed in the release after this one. */
  ProcessOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `RunProcessOptions` from there. The subpath is removed in the release after this one. */
  RunProcessOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `StartProcessOptions` from there. The subpath is removed in the release after this one. */
  StartProcessOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessDurations` from there. The subpath is removed in the release after this one. */
  ProcessDurations,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessExit` from there. The subpath is removed in the release after this one. */
  ProcessExit,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessResult` from there. The subpath is removed in the release after this one. */
  ProcessResult,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `RunningProcess` from there. The subpath is removed in the release after this one. */
  RunningProcess,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `RunningProcessCloseOptions` from there. The subpath is removed in the release after this one. */
  RunningProcessCloseOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `CapturedOutput` from there. The subpath is removed in the release after this one. */
  CapturedOutput,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessLauncher` from there. The subpath is removed in the release after this one. */
  ProcessLauncher,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessLaunch` from there. The subpath is removed in the release after this one. */
  ProcessLaunch,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `PreparedLaunch` from there. The subpath is removed in the release after this one. */
  PreparedLaunch,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessEnvironmentOptions` from there. The subpath is removed in the release after this one. */
  ProcessEnvironmentOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessErrorCode` from there. The subpath is removed in the release after this one. */
  ProcessErrorCode,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessStartErrorOptions` from there. The subpath is removed in the release after this one. */
  ProcessStartErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessOptionsErrorOptions` from there. The subpath is removed in the release after this one. */
  ProcessOptionsErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessLaunchErrorOptions` from there. The subpath is removed in the release after this one. */
  ProcessLaunchErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/process` moved to `@ca/sandbox`: import `ProcessLaunchStage` from there. The subpath is removed in the release after this one. */
  ProcessLaunchStage,
} from '@ca/sandbox';
