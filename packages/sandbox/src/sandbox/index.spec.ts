import * as mainEntry from '../index';
import * as sandboxEntry from './index';

describe('the kernel sandbox in the public API of @ca/sandbox', () => {
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

  it('puts every name of the sandbox on the main entry, as the same values', () => {
    for (const name of Object.keys(sandboxEntry))
      expect([name, (mainEntry as Record<string, unknown>)[name]]).toEqual([name, (sandboxEntry as Record<string, unknown>)[name]]);
  });
});
