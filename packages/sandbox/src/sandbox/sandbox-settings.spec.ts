import { CaError } from '@ca/domain';
import { createExecutionContext } from '@ca/tool-context';
import {
  createSandbox,
  probeSandbox,
  resolveSandboxSettings,
  sandboxOptionsForPlan,
  SandboxError,
  SandboxSettingsError,
  SandboxUnavailableError,
} from './index';

describe('sandbox settings', () => {
  it('takes a mode or the settings in full, filling in the defaults', () => {
    expect(resolveSandboxSettings(undefined)).toEqual({ mode: 'auto', network: true, bwrapPath: undefined });
    expect(resolveSandboxSettings(undefined, { defaultMode: 'off' })).toEqual({ mode: 'off', network: true, bwrapPath: undefined });
    expect(resolveSandboxSettings('required')).toEqual({ mode: 'required', network: true, bwrapPath: undefined });
    expect(resolveSandboxSettings({ mode: 'auto', network: false, bwrapPath: '/opt/bin/bwrap' })).toEqual({
      mode: 'auto',
      network: false,
      bwrapPath: '/opt/bin/bwrap',
    });
  });

  it.each([
    ['on', 'sandbox'],
    [true, 'sandbox'],
    [{ mode: 'always' }, 'sandbox.mode'],
    [{ mode: 'auto', network: 'no' }, 'sandbox.network'],
    [{ mode: 'auto', bwrapPath: 'bwrap' }, 'sandbox.bwrapPath'],
    [{ mode: 'auto', netwrok: false }, 'sandbox.netwrok'],
  ])('refuses %j with SANDBOX_INVALID_SETTINGS naming %s', (value, setting) => {
    const error = (() => {
      try {
        resolveSandboxSettings(value);
        return undefined;
      } catch (caught) {
        return caught;
      }
    })();
    expect(SandboxSettingsError.isInstance(error)).toBe(true);
    expect(SandboxError.isInstance(error)).toBe(true);
    expect(CaError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SANDBOX_INVALID_SETTINGS', setting });
    expect((error as Error).message).toMatch(new RegExp(`^The sandbox setting ${setting.replace('.', '\\.')} must be`));
  });

  it('required without a working bwrap: activation is refused with the reason and the install command; auto falls back to no sandbox', async () => {
    const missing = '/nonexistent/ca-no-bwrap';
    expect(await probeSandbox({ bwrapPath: missing })).toMatchObject({
      available: false,
      reason: process.platform === 'linux' ? `${missing} does not exist` : expect.stringMatching(/Linux only/),
    });
    const required = createSandbox({ mode: 'required', bwrapPath: missing }, { setting: 'command.sandbox' });
    expect(await required.isEnabled()).toBe(true);
    const refused = await required.ensureAvailable({ toolName: 'builtin.command.run', planId: 'p1' }).catch((error: unknown) => error);
    expect(SandboxUnavailableError.isInstance(refused)).toBe(true);
    expect(refused).toMatchObject({ code: 'SANDBOX_UNAVAILABLE', toolName: 'builtin.command.run', planId: 'p1' });
    expect((refused as Error).message).toMatch(
      /^Tool 'builtin\.command\.run' in plan 'p1': the sandbox is required \(command\.sandbox\) but does not work on this machine: .*apt-get install bubblewrap/,
    );
    await expect(required.launcher({ writes: 'none', network: false })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    const auto = createSandbox({ mode: 'auto', bwrapPath: missing }, { warn: () => undefined });
    expect(await auto.isEnabled()).toBe(false);
    await expect(auto.ensureAvailable()).resolves.toBeUndefined();
    expect(await auto.launcher({ writes: 'none', network: false })).toBeUndefined();
    const off = createSandbox('off');
    expect(await off.isEnabled()).toBe(false);
    expect(await off.launcher({ writes: 'in-place', network: true })).toBeUndefined();
  });

  it('auto falling back to no sandbox says so once per setting and reason, loudly, with the reason and what to do', async () => {
    const missing = '/nonexistent/ca-no-bwrap-told-once';
    const told: string[] = [];
    const warn = (message: string) => void told.push(message);
    const auto = createSandbox({ mode: 'auto', bwrapPath: missing }, { setting: 'command.sandbox', warn });
    expect(await auto.isEnabled()).toBe(false);
    expect(await auto.launcher({ writes: 'in-place', network: true })).toBeUndefined();
    expect(await createSandbox({ mode: 'auto', bwrapPath: missing }, { setting: 'command.sandbox', warn }).isEnabled()).toBe(false);
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^The kernel sandbox is off: command\.sandbox is 'auto' and the sandbox does not work here \(/);
    expect(told[0]).toContain(process.platform === 'linux' ? `${missing} does not exist` : 'Linux only');
    expect(told[0]).toMatch(/Programs run unconfined: .*apt-get install bubblewrap.*'required'.*'off'/);
    // Another setting is another warning; 'required' and 'off' never fall back.
    await createSandbox({ mode: 'auto', bwrapPath: missing }, { setting: 'sandbox', warn }).launcher({ writes: 'none', network: false });
    await createSandbox({ mode: 'required', bwrapPath: missing }, { setting: 'other', warn }).isEnabled();
    await createSandbox('off', { setting: 'third', warn }).isEnabled();
    expect(told).toHaveLength(2);
    expect(told[1]).toMatch(/^The kernel sandbox is off: sandbox is 'auto'/);
    // A logger that throws does not make the call fail.
    const throwing = createSandbox(
      { mode: 'auto', bwrapPath: `${missing}-2` },
      {
        warn: () => {
          throw new Error('log down');
        },
      },
    );
    expect(await throwing.isEnabled()).toBe(false);
  });

  it('maps a plan to what its programs may write: nothing when read-only, an overlay under checkpoints only for a caller that records it', () => {
    const resources = [{ id: 'w', kind: 'filesystem', uri: 'file:///work', access: 'write' as const }];
    const plan = (policy: { readOnly?: boolean; requireCheckpoint?: boolean }) => createExecutionContext({ policy, resources });
    expect(sandboxOptionsForPlan(plan({ readOnly: true }), { overlay: true })).toMatchObject({ writes: 'none', network: true });
    expect(sandboxOptionsForPlan(plan({ readOnly: true, requireCheckpoint: true }), { overlay: true })).toMatchObject({ writes: 'none' });
    expect(sandboxOptionsForPlan(plan({ requireCheckpoint: true }), { overlay: true })).toMatchObject({ writes: 'overlay' });
    expect(sandboxOptionsForPlan(plan({ requireCheckpoint: true }))).toMatchObject({ writes: 'none' });
    expect(sandboxOptionsForPlan(plan({}))).toMatchObject({ writes: 'in-place', network: true, resources });
    // The plan-level network switch of the policy, once PlanPolicy carries it.
    expect(sandboxOptionsForPlan({ policy: { readOnly: false, requireCheckpoint: false, network: 'deny' } as never, resources })).toMatchObject({
      network: false,
    });
  });
});
