import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CliError } from './cli-error';
import { EXIT_CODES } from './exit-codes';

/** What `agents plan list` shows of a running plan. */
export interface RunningPlan {
  readonly planId: string;
  readonly pid: number;
  readonly startedAt: string;
  readonly planFile: string;
  readonly socket: string;
}

/** The state directory: `--state-dir`, else `$AGENTS_STATE_DIR`, else `$XDG_STATE_HOME/agents`, else `~/.local/state/agents`. */
export function resolveStateDir(option: string | undefined, env: Readonly<Record<string, string | undefined>>): string {
  if (option !== undefined) return path.resolve(option);
  if (env['AGENTS_STATE_DIR']) return path.resolve(env['AGENTS_STATE_DIR']);
  if (env['XDG_STATE_HOME']) return path.join(env['XDG_STATE_HOME'], 'agents');
  return path.join(os.homedir(), '.local', 'state', 'agents');
}

const PLAN_ID = /^[A-Za-z0-9_.-]{1,100}$/;
/** Longest message a plan reads on its channel. */
const MAX_MESSAGE_LENGTH = 4096;
/** The prefix of an answer to an approval request: `approval {"decision":"approve",…}`. */
const APPROVAL_MESSAGE = 'approval ';

/** @throws CliError when `planId` cannot name a plan (it becomes a file name). */
export function checkPlanId(planId: string): void {
  if (!PLAN_ID.test(planId) || planId === '.' || planId === '..') {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `Plan id '${planId}' is not valid: use 1–100 letters, digits, '_', '.' or '-'.`,
    });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Running plans of this machine and user, announced under a state directory:
 * `plans/<id>.json` (pid, start, plan file, socket) and a Unix socket (or
 * Windows pipe) the plan listens on for `cancel`. Entries of processes that
 * died are cleaned up when listed.
 */
export class PlanRegistry {
  private readonly plansDir: string;

  constructor(stateDir: string) {
    this.plansDir = path.join(stateDir, 'plans');
  }

  /**
   * Announces a running plan and listens for cancellation requests and,
   * with `onApproval`, answers to its approval requests (`approval <json>`,
   * replied to with the line `onApproval` returns).
   * Returns a function that withdraws the announcement.
   * @throws CliError when a live plan already uses this id.
   */
  async announce(
    planId: string,
    planFile: string,
    onCancel: (reason: string) => void,
    onApproval?: (answer: string) => string,
  ): Promise<() => Promise<void>> {
    checkPlanId(planId);
    fs.mkdirSync(this.plansDir, { recursive: true, mode: 0o700 });
    const existing = this.read(planId);
    if (existing !== undefined && isAlive(existing.pid)) {
      throw new CliError({
        code: 'CLI_USAGE',
        message: `A plan with id '${planId}' is already running (pid ${existing.pid}). Choose another --plan-id, or cancel it with 'agents plan cancel ${planId}'.`,
      });
    }
    const socket = this.socketPath(planId);
    if (process.platform !== 'win32') fs.rmSync(socket, { force: true });
    const server = net.createServer((connection) => {
      connection.setEncoding('utf8');
      let buffer = '';
      connection.on('data', (chunk: string) => {
        buffer += chunk;
        if (buffer.length > MAX_MESSAGE_LENGTH) connection.destroy();
        if (!buffer.includes('\n')) return;
        const command = buffer.trim();
        if (command === 'cancel') {
          connection.end('ok\n');
          onCancel(`cancelled by 'agents plan cancel ${planId}'`);
        } else if (command.startsWith(APPROVAL_MESSAGE) && onApproval !== undefined) {
          // The second kind of message: an answer to an approval request of the plan.
          connection.end(`${onApproval(command.slice(APPROVAL_MESSAGE.length))}\n`);
        } else {
          connection.end('unknown command\n');
        }
      });
      connection.on('error', () => undefined);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const entry: RunningPlan = { planId, pid: process.pid, startedAt: new Date().toISOString(), planFile, socket };
    fs.writeFileSync(this.entryPath(planId), `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
    let withdrawn = false;
    return async () => {
      if (withdrawn) return;
      withdrawn = true;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(this.entryPath(planId), { force: true });
      if (process.platform !== 'win32') fs.rmSync(socket, { force: true });
    };
  }

  /** The live plans, oldest first; stale entries are removed. */
  list(): RunningPlan[] {
    if (!fs.existsSync(this.plansDir)) return [];
    const plans: RunningPlan[] = [];
    for (const file of fs.readdirSync(this.plansDir)) {
      if (!file.endsWith('.json')) continue;
      const entry = this.read(file.slice(0, -'.json'.length));
      if (entry === undefined) continue;
      if (isAlive(entry.pid)) plans.push(entry);
      else this.remove(entry);
    }
    return plans.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /**
   * Asks a running plan to cancel itself and waits for its acknowledgement.
   * @throws CliError (exit 4) when no live plan has this id.
   */
  async cancel(planId: string, timeoutMs = 5_000): Promise<void> {
    const reply = await this.send(planId, 'cancel', timeoutMs);
    if (reply !== 'ok') throw new CliError({ code: 'CLI_USAGE', message: `Plan '${planId}' answered '${reply}' instead of ok.` });
  }

  /**
   * Sends an answer to an approval request of a running plan
   * (`agents plan approve` / `deny`) and returns what the plan replied:
   * `ok <request-id> <tool>`.
   * @throws CliError (exit 4) when no live plan has this id; (exit 2) when the plan refused the answer, with its reason.
   */
  async answerApproval(planId: string, answer: object, timeoutMs = 5_000): Promise<string> {
    const reply = await this.send(planId, `${APPROVAL_MESSAGE}${JSON.stringify(answer)}`, timeoutMs);
    if (reply.startsWith('ok ')) return reply;
    if (reply === 'unknown command') {
      throw new CliError({ code: 'CLI_USAGE', message: `Plan '${planId}' does not take answers to approval requests (it was started by a command that does not ask, or by an older version).` });
    }
    throw new CliError({ code: 'CLI_USAGE', message: `Plan '${planId}' refused the answer: ${reply.replace(/^error /, '')}.` });
  }

  /** Sends one line to a running plan and resolves to its reply. */
  private async send(planId: string, line: string, timeoutMs: number): Promise<string> {
    checkPlanId(planId);
    const entry = this.read(planId);
    if (entry === undefined || !isAlive(entry.pid)) {
      if (entry !== undefined) this.remove(entry);
      throw new CliError({
        code: 'CLI_PLAN_NOT_FOUND',
        exitCode: EXIT_CODES.notFound,
        message: `No running plan has id '${planId}'. 'agents plan list' shows the running plans.`,
      });
    }
    const reply = await new Promise<string>((resolve, reject) => {
      const connection = net.connect(entry.socket);
      let answer = '';
      const timer = setTimeout(() => {
        connection.destroy();
        reject(new Error(`plan '${planId}' did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      connection.setEncoding('utf8');
      connection.on('connect', () => connection.write(`${line}\n`));
      connection.on('data', (chunk: string) => (answer += chunk));
      connection.on('end', () => {
        clearTimeout(timer);
        resolve(answer.trim());
      });
      connection.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    }).catch((error: Error) => {
      throw new CliError({
        code: 'CLI_PLAN_NOT_FOUND',
        exitCode: EXIT_CODES.notFound,
        message: `Could not reach plan '${planId}' (pid ${entry.pid}): ${error.message}.`,
        cause: error,
      });
    });
    return reply;
  }

  private read(planId: string): RunningPlan | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.entryPath(planId), 'utf8')) as RunningPlan;
    } catch {
      return undefined;
    }
  }

  private remove(entry: RunningPlan): void {
    fs.rmSync(this.entryPath(entry.planId), { force: true });
    if (process.platform !== 'win32') fs.rmSync(entry.socket, { force: true });
  }

  private entryPath(planId: string): string {
    return path.join(this.plansDir, `${planId}.json`);
  }

  private socketPath(planId: string): string {
    const hash = createHash('sha256').update(`${this.plansDir}\0${planId}`).digest('hex').slice(0, 16);
    if (process.platform === 'win32') return `\\\\.\\pipe\\agents-${hash}`;
    const preferred = path.join(this.plansDir, `${planId}.sock`);
    // Unix socket paths are limited to about 104 bytes.
    return Buffer.byteLength(preferred) < 100 ? preferred : path.join(os.tmpdir(), `agents-${hash}.sock`);
  }
}
