// `@ca/tool-lifecycle/sandbox`: the kernel sandbox moved to `@ca/sandbox`. These names are
// re-exported from there for one release, so that importing this subpath needs
// `@ca/sandbox` installed (an optional peer of this package). The subpath is
// removed in the release after this one: import from `@ca/sandbox` instead.
export {
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `createSandbox` from there. The subpath is removed in the release after this one. */
  createSandbox,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `sandboxOptionsForPlan` from there. The subpath is removed in the release after this one. */
  sandboxOptionsForPlan,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `probeSandbox` from there. The subpath is removed in the release after this one. */
  probeSandbox,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `resolveSandboxSettings` from there. The subpath is removed in the release after this one. */
  resolveSandboxSettings,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxError` from there. The subpath is removed in the release after this one. */
  SandboxError,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SANDBOX_INSTALL_COMMAND` from there. The subpath is removed in the release after this one. */
  SANDBOX_INSTALL_COMMAND,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxUnavailableError` from there. The subpath is removed in the release after this one. */
  SandboxUnavailableError,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxSettingsError` from there. The subpath is removed in the release after this one. */
  SandboxSettingsError,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxOverlayError` from there. The subpath is removed in the release after this one. */
  SandboxOverlayError,
} from '@ca/sandbox';
export type {
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `CreateSandboxOptions` from there. The subpath is removed in the release after this one. */
  CreateSandboxOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `Sandbox` from there. The subpath is removed in the release after this one. */
  Sandbox,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxedPlan` from there. The subpath is removed in the release after this one. */
  SandboxedPlan,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `ProbeSandboxOptions` from there. The subpath is removed in the release after this one. */
  ProbeSandboxOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxSupport` from there. The subpath is removed in the release after this one. */
  SandboxSupport,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `ResolvedSandboxSettings` from there. The subpath is removed in the release after this one. */
  ResolvedSandboxSettings,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxMode` from there. The subpath is removed in the release after this one. */
  SandboxMode,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxSetting` from there. The subpath is removed in the release after this one. */
  SandboxSetting,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxSettings` from there. The subpath is removed in the release after this one. */
  SandboxSettings,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxLaunchOptions` from there. The subpath is removed in the release after this one. */
  SandboxLaunchOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxLauncher` from there. The subpath is removed in the release after this one. */
  SandboxLauncher,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxOverlay` from there. The subpath is removed in the release after this one. */
  SandboxOverlay,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxWrites` from there. The subpath is removed in the release after this one. */
  SandboxWrites,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `OverlayChange` from there. The subpath is removed in the release after this one. */
  OverlayChange,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `OverlayEntry` from there. The subpath is removed in the release after this one. */
  OverlayEntry,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `OverlaySkippedEntry` from there. The subpath is removed in the release after this one. */
  OverlaySkippedEntry,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `OverlayApplyHooks` from there. The subpath is removed in the release after this one. */
  OverlayApplyHooks,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `OverlayTarget` from there. The subpath is removed in the release after this one. */
  OverlayTarget,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxErrorCode` from there. The subpath is removed in the release after this one. */
  SandboxErrorCode,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxUnavailableErrorOptions` from there. The subpath is removed in the release after this one. */
  SandboxUnavailableErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxSettingsErrorOptions` from there. The subpath is removed in the release after this one. */
  SandboxSettingsErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxOverlayErrorOptions` from there. The subpath is removed in the release after this one. */
  SandboxOverlayErrorOptions,
  /** @deprecated `@ca/tool-lifecycle/sandbox` moved to `@ca/sandbox`: import `SandboxOverlayStage` from there. The subpath is removed in the release after this one. */
  SandboxOverlayStage,
} from '@ca/sandbox';
