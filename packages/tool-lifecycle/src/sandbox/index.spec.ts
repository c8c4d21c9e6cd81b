import * as mainEntry from '../index';
import * as sandboxEntry from './index';

describe('@ca/tool-lifecycle/sandbox public API', () => {
  it('exports exactly the documented names', () => {
    expect(Object.keys(sandboxEntry).sort()).toEqual([
      'SANDBOX_INSTALL_COMMAND',
      'SandboxError',
      'SandboxOverlayError',
      'SandboxSettingsError',
      'SandboxUnavailableError',
      'createSandbox',
      'probeSandbox',
      'resolveSandboxSettings',
      'sandboxOptionsForPlan',
    ]);
    expect(sandboxEntry.SANDBOX_INSTALL_COMMAND).toBe('apt-get install bubblewrap');
  });

  it('keeps the sandbox off the main entry', () => {
    expect(Object.keys(mainEntry)).not.toContain('createSandbox');
  });
});
