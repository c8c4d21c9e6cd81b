// Shared by the sandbox specs (excluded from the build): a script run as
// another user, to prove what that user can and cannot see.
import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** True when this process may start one of another user (root): then {@link runNodeAsAnotherUser} runs as nobody. */
export const MAY_CHANGE_USER = process.getuid?.() === 0;

/**
 * Runs `script` in a Node process of another user — nobody (65534) when this
 * process may change users, else this one — with only `env`, and returns the
 * JSON it wrote on stdout.
 * @throws when the script exits with another code than 0, with its stderr.
 */
export async function runNodeAsAnotherUser(script: string, env: Record<string, string>, cwd = '/'): Promise<unknown> {
  const child = spawn(process.execPath, ['-e', script], {
    env,
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(MAY_CHANGE_USER ? { uid: 65534, gid: 65534 } : {}),
  });
  let output = '';
  let errors = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`the script failed (exit ${String(code)}): ${errors.trim()}`);
  return JSON.parse(output) as unknown;
}
