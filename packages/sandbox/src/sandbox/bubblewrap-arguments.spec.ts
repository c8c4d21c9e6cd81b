import { bubblewrapArguments } from './bubblewrap-arguments';

describe('bubblewrapArguments', () => {
  it('binds the root read-only, then /tmp and the mounts shallowest first, then /dev and /proc, in a PID namespace that dies with the runtime', () => {
    const args = bubblewrapArguments({
      mounts: [
        { source: '/work/project/vendor', target: '/work/project/vendor', writable: false },
        { source: '/work/project', target: '/work/project', writable: true },
        { source: '/tmp/skill', target: '/tmp/skill', writable: false },
      ],
      network: true,
      cwd: '/work/project',
      env: { PATH: '/usr/bin:/bin' },
    });
    expect(args).toEqual([
      '--ro-bind',
      '/',
      '/',
      '--tmpfs',
      '/tmp',
      '--bind',
      '/work/project',
      '/work/project',
      '--ro-bind',
      '/tmp/skill',
      '/tmp/skill',
      '--ro-bind',
      '/work/project/vendor',
      '/work/project/vendor',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
      '--unshare-pid',
      '--unshare-ipc',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--clearenv',
      '--setenv',
      'PATH',
      '/usr/bin:/bin',
      '--chdir',
      '/work/project',
    ]);
  });

  it('takes the network away unless allowed, and passes every variable as data, not through its own environment', () => {
    const args = bubblewrapArguments({ mounts: [], network: false, cwd: undefined, env: { A: 'x y', LD_PRELOAD: '/w/evil.so' } });
    expect(args).toContain('--unshare-net');
    expect(args).not.toContain('--chdir');
    expect(args.slice(args.indexOf('--clearenv'))).toEqual(['--clearenv', '--setenv', 'A', 'x y', '--setenv', 'LD_PRELOAD', '/w/evil.so']);
  });

  it('binds a resource that is /tmp itself over the private /tmp', () => {
    const args = bubblewrapArguments({ mounts: [{ source: '/tmp', target: '/tmp', writable: true }], network: true, cwd: undefined, env: {} });
    expect(args.indexOf('--tmpfs')).toBeLessThan(args.indexOf('--bind'));
  });
});
