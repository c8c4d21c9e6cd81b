import { spawnSync } from 'node:child_process';

let cached: { readonly available: boolean; readonly reason?: string } | undefined;

/**
 * For test files that need the kernel sandbox: `true` when `bwrap` and
 * unprivileged user namespaces work here (checked once, synchronously, so a
 * test file can choose `describe` or `describe.skip` while it is loaded).
 * Otherwise it says loudly on stderr that `suite` was not run and how to
 * install bubblewrap, and returns `false` — except under `CI=true`, where a
 * missing sandbox is a failure: it throws, which fails the test file.
 *
 * @throws Error under `CI=true` when the sandbox does not work.
 */
export function sandboxAvailableForTests(suite: string): boolean {
  cached ??= checkSandbox();
  if (cached.available) return true;
  const rule = '!'.repeat(78);
  const message = [
    '',
    rule,
    `!! NOT RUN: ${suite}`,
    `!! The kernel sandbox does not work here: ${cached.reason ?? 'unknown'}.`,
    '!! Install bubblewrap (apt-get install bubblewrap, as root) on Linux with unprivileged',
    '!! user namespaces allowed, then run the tests again. Under CI=true this fails the run.',
    rule,
    '',
  ].join('\n');
  if (process.env['CI'] === 'true') throw new Error(message);
  process.stderr.write(`${message}\n`);
  return false;
}

function checkSandbox(): { readonly available: boolean; readonly reason?: string } {
  if (process.platform !== 'linux') return { available: false, reason: `the sandbox runs on Linux only; this is ${process.platform}` };
  const bwrap = spawnSync(
    'bwrap',
    ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', '--die-with-parent', '--', 'true'],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  if (bwrap.error !== undefined) return { available: false, reason: `bwrap could not be started (${bwrap.error.message})` };
  if (bwrap.status !== 0) return { available: false, reason: `bwrap failed: ${bwrap.stderr.trim() || `exit ${String(bwrap.status)}`}` };
  const namespaces = spawnSync('unshare', ['--user', '--map-root-user', '--mount', 'true'], { encoding: 'utf8', timeout: 20_000 });
  if (namespaces.error !== undefined || namespaces.status !== 0) {
    return {
      available: false,
      reason: `user namespaces are not allowed (unshare: ${namespaces.error?.message ?? (namespaces.stderr.trim() || `exit ${String(namespaces.status)}`)})`,
    };
  }
  return { available: true };
}
