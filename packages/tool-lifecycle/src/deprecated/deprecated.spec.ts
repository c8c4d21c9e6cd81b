import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as mainEntry from '../index';
import { loadSandbox, loadSandboxTesting } from './load-sandbox';
import * as testingEntry from '../testing/index';
import * as processEntry from './process';
import * as sandboxEntry from './sandbox';

// The process runner and the kernel sandbox moved to @ca/sandbox. For one
// release the old subpaths and names keep working, as the same values.
const sandboxPackage = loadSandbox() as unknown as Record<string, unknown>;
const sandboxTesting = loadSandboxTesting();

describe('@ca/tool-lifecycle/process (deprecated: moved to @ca/sandbox)', () => {
  it('exports exactly the names it had', () => {
    expect(Object.keys(processEntry).sort()).toEqual([
      'MINIMAL_ENVIRONMENT_VARIABLES',
      'PROCESS_GROUPS_SUPPORTED',
      'ProcessError',
      'ProcessLaunchError',
      'ProcessOptionsError',
      'ProcessStartError',
      'buildProcessEnvironment',
      'runProcess',
      'signalProcessGroup',
      'startProcess',
    ]);
  });

  it('re-exports the values of @ca/sandbox', () => {
    for (const [name, value] of Object.entries(processEntry)) expect([name, value]).toEqual([name, sandboxPackage[name]]);
    expect(processEntry.runProcess).toBe(sandboxPackage['runProcess']);
  });

  it('keeps signalProcessGroup and PROCESS_GROUPS_SUPPORTED on the main entry, and not the runner', () => {
    expect(mainEntry.PROCESS_GROUPS_SUPPORTED).toBe(processEntry.PROCESS_GROUPS_SUPPORTED);
    expect(typeof mainEntry.signalProcessGroup).toBe('function');
    expect(Object.keys(mainEntry)).not.toContain('runProcess');
  });

  it("the main entry's signalProcessGroup still signals the whole group", async () => {
    const child = spawn('sh', ['-c', 'sleep 30 & wait'], { detached: mainEntry.PROCESS_GROUPS_SUPPORTED, stdio: 'ignore' });
    const closed = new Promise<NodeJS.Signals | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
    await new Promise((resolve) => child.once('spawn', resolve));
    mainEntry.signalProcessGroup(child, 'SIGKILL');
    expect(await closed).toBe('SIGKILL');
    expect(await sandboxTesting.waitUntilProcessesGone([child.pid!])).toBe(true);
  });
});

describe('@ca/tool-lifecycle/sandbox (deprecated: moved to @ca/sandbox)', () => {
  it('exports exactly the names it had, as the values of @ca/sandbox', () => {
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
    for (const [name, value] of Object.entries(sandboxEntry)) expect([name, value]).toEqual([name, sandboxPackage[name]]);
  });

  it('keeps the sandbox off the main entry', () => {
    expect(Object.keys(mainEntry)).not.toContain('createSandbox');
  });
});

describe('the helpers for tests of programs on @ca/tool-lifecycle/testing (deprecated: moved to @ca/sandbox/testing)', () => {
  it('still answer as those of @ca/sandbox/testing', async () => {
    expect(testingEntry.isProcessAlive(process.pid)).toBe(true);
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('close', resolve));
    expect(testingEntry.isProcessAlive(gone.pid!)).toBe(sandboxTesting.isProcessAlive(gone.pid!));
    expect(await testingEntry.waitUntilProcessesGone([gone.pid!], 1_000)).toBe(true);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(testingEntry.sandboxAvailableForTests('a deprecated helper')).toBe(sandboxTesting.sandboxAvailableForTests('the helper'));
    } finally {
      stderr.mockRestore();
    }
  });
});

describe('the manifest', () => {
  it('makes @ca/sandbox an optional peer, so a service that starts no program need not install it', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as Record<string, any>;
    expect(manifest.peerDependencies['@ca/sandbox']).toEqual(expect.any(String));
    expect(manifest.peerDependenciesMeta['@ca/sandbox']).toEqual({ optional: true });
    expect(manifest.dependencies['@ca/sandbox']).toBeUndefined();
    expect(manifest.exports['./process']).toEqual({ types: './dist/deprecated/process.d.ts', default: './dist/deprecated/process.js' });
    expect(manifest.exports['./sandbox']).toEqual({ types: './dist/deprecated/sandbox.d.ts', default: './dist/deprecated/sandbox.js' });
  });
});
