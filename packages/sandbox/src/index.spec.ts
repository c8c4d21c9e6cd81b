import * as publicApi from './index';
import * as testing from './testing/index';

describe('@ca/sandbox public API', () => {
  it('exports exactly the documented names: the process runner and the kernel sandbox', () => {
    expect(Object.keys(publicApi).sort()).toEqual([
      'MINIMAL_ENVIRONMENT_VARIABLES',
      'PROCESS_GROUPS_SUPPORTED',
      'ProcessError',
      'ProcessLaunchError',
      'ProcessOptionsError',
      'ProcessStartError',
      'SANDBOX_INSTALL_COMMAND',
      'SandboxError',
      'SandboxOverlayError',
      'SandboxSettingsError',
      'SandboxUnavailableError',
      'buildProcessEnvironment',
      'createSandbox',
      'probeSandbox',
      'resolveSandboxSettings',
      'runProcess',
      'sandboxOptionsForPlan',
      'signalProcessGroup',
      'startProcess',
    ]);
  });

  it('exports the helpers for tests of tools that run programs from the testing subpath only', () => {
    expect(Object.keys(testing).sort()).toEqual([
      'isProcessAlive',
      'killProcesses',
      'makeTemporaryFolder',
      'processesWithArgument',
      'removeTemporaryFolders',
      'sandboxAvailableForTests',
      'snapshotTree',
      'uniqueSleep',
      'waitUntil',
      'waitUntilProcessesGone',
    ]);
    expect(Object.keys(publicApi)).not.toContain('isProcessAlive');
  });
});
