import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  PlanRegistryError,
  checkPlanControlMessage,
  checkPlanProgress,
  checkPlanRegistration,
  parsePlanControlMessage,
  parseRegisteredPlan,
  type PlanControlMessage,
  type PlanMessageHandler,
  type PlanProgress,
  type PlanRegistration,
  type PlanRegistry,
  type PlanRegistryEntry,
  type PlanSendResult,
  type RegisteredPlan,
} from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import { checkStateFolder } from './state-folder';

/** What `agents plan list` shows of a running plan. */
export type RunningPlan = RegisteredPlan;

/**
 * An entry of the state folder: the plan's record, and the socket it listens
 * on (written for earlier versions of the command, which read it; this one
 * derives the socket from the plan id and never trusts the field).
 */
interface StateEntry extends RegisteredPlan {
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
/** The longest request line a plan's socket reads. */
const MAX_REQUEST_BYTES = 64 * 1024;

function planIdText(planId: string): string | undefined {
  return !PLAN_ID.test(planId) || planId === '.' || planId === '..'
    ? `Plan id '${planId}' is not valid: use 1–100 letters, digits, '_', '.' or '-'.`
    : undefined;
}

/** @throws CliError when `planId` cannot name a plan (it becomes a file name). */
export function checkPlanId(planId: string): void {
  const problem = planIdText(planId);
  if (problem !== undefined) throw new CliError({ code: 'CLI_USAGE', message: problem });
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
 * The plan registry of one machine and user (the `PlanRegistry` of
 * `@ca/tool-lifecycle`, for the `agents` command when no shared registry is
 * configured): running plans are announced under a state directory, as
 * `plans/<id>.json` (the plan's record) and a Unix socket (or Windows pipe)
 * the plan listens on for control messages, whose path follows from the plan
 * id alone. Entries of processes that died are cleaned up when listed.
 * Heartbeats rewrite the record with the plan's progress; liveness is the
 * process's, not a TTL.
 *
 * Whoever can write to the state folder can read and steer the plans in it,
 * so the folder (and `plans` in it) must be the user's own, writable by
 * nobody else and not a link: every operation checks that first
 * (`CLI_STATE_UNSAFE`). An entry's content is never trusted with a path: the
 * socket connected to and the files removed are derived from the plan id.
 */
export class LocalPlanRegistry implements PlanRegistry {
  readonly description: string;
  readonly heartbeatIntervalMs: number;
  private readonly stateDir: string;
  private readonly plansDir: string;
  private readonly host = os.hostname();
  private readonly entries = new Set<PlanRegistryEntry>();

  constructor(stateDir: string, options: { readonly heartbeatIntervalMs?: number } = {}) {
    this.stateDir = stateDir;
    this.plansDir = path.join(stateDir, 'plans');
    this.description = `state folder ${stateDir}`;
    this.heartbeatIntervalMs = options.heartbeatIntervalMs ?? 2_000;
    // Checked at once, so that a command refuses an unsafe folder before it starts anything.
    this.checkFolders(false);
  }

  /**
   * Checks the state folder and its `plans` folder (making them with
   * `create`); false when they do not exist yet.
   * @throws CliError `CLI_STATE_UNSAFE`.
   */
  private checkFolders(create: boolean): boolean {
    return checkStateFolder(this.stateDir, 'running plans', { create }) && checkStateFolder(this.plansDir, 'running plans', { create });
  }

  /**
   * Announces a running plan and listens for its control messages.
   * @throws PlanRegistryError `PLAN_REGISTRY_DUPLICATE_PLAN` when a live plan
   *   already uses this id; `PLAN_REGISTRY_INVALID_ARGUMENT` for an id that
   *   cannot be a file name.
   */
  async register(registration: PlanRegistration, onMessage: PlanMessageHandler): Promise<PlanRegistryEntry> {
    const checked = checkPlanRegistration(registration, this.description);
    const planId = checked.planId;
    const problem = planIdText(planId);
    if (problem !== undefined) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry: this.description, planId, reason: problem });
    this.checkFolders(true);
    const existing = this.read(planId);
    if (existing !== undefined && isAlive(existing.pid)) {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_DUPLICATE_PLAN',
        registry: this.description,
        planId,
        reason: `it runs as pid ${existing.pid}`,
        advice: `Choose another --plan-id, or cancel it with 'agents plan cancel ${planId}'.`,
      });
    }
    const socket = this.socketPath(planId, true);
    if (process.platform !== 'win32') fs.rmSync(socket, { force: true });
    const server = net.createServer((connection) => {
      connection.setEncoding('utf8');
      let buffer = '';
      connection.on('data', (chunk: string) => {
        buffer += chunk;
        if (buffer.length > MAX_REQUEST_BYTES) {
          connection.destroy();
          return;
        }
        if (!buffer.includes('\n')) return;
        const message = this.readRequest(buffer.slice(0, buffer.indexOf('\n')), planId);
        if (message === undefined) {
          connection.end('unknown command\n');
          return;
        }
        connection.end('ok\n');
        onMessage(message);
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
    let record: StateEntry = { ...checked, host: this.host, pid: process.pid, heartbeatAt: new Date().toISOString(), socket };
    this.write(record);
    let ended = false;
    const entry: PlanRegistryEntry = {
      heartbeat: async (progress: PlanProgress) => {
        if (ended) return;
        const { pendingApprovals: _previous, ...rest } = record;
        record = { ...rest, ...checkPlanProgress(progress, this.description, planId), heartbeatAt: new Date().toISOString() };
        this.write(record);
      },
      end: async () => {
        if (ended) return;
        ended = true;
        this.entries.delete(entry);
        await new Promise<void>((resolve) => server.close(() => resolve()));
        fs.rmSync(this.entryPath(planId), { force: true });
        if (process.platform !== 'win32') fs.rmSync(socket, { force: true });
      },
    };
    this.entries.add(entry);
    return entry;
  }

  /**
   * The live plans, oldest first. The entries of processes that died are
   * removed — the entry and the socket its plan id names, never a file the
   * entry's content names.
   */
  async list(): Promise<readonly RunningPlan[]> {
    if (!this.checkFolders(false)) return [];
    const plans: RunningPlan[] = [];
    for (const file of fs.readdirSync(this.plansDir)) {
      if (!file.endsWith('.json')) continue;
      const planId = file.slice(0, -'.json'.length);
      if (planIdText(planId) !== undefined) continue;
      const entry = this.read(planId);
      if (entry === undefined) continue;
      if (!isAlive(entry.pid)) {
        this.remove(planId);
        continue;
      }
      plans.push(entry);
    }
    return plans.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  }

  /**
   * Hands a control message to a running plan and waits for its acknowledgement.
   * @throws PlanRegistryError `PLAN_REGISTRY_PLAN_NOT_FOUND` when no live plan has the id, or it does not answer.
   */
  async send(message: PlanControlMessage, timeoutMs = 5_000): Promise<PlanSendResult> {
    const checked = checkPlanControlMessage(message, this.description);
    const planId = checked.planId;
    const problem = planIdText(planId);
    if (problem !== undefined) throw new PlanRegistryError({ code: 'PLAN_REGISTRY_INVALID_ARGUMENT', registry: this.description, planId, reason: problem });
    const entry = this.checkFolders(false) ? this.read(planId) : undefined;
    if (entry === undefined || !isAlive(entry.pid)) {
      if (entry !== undefined) this.remove(planId);
      throw new PlanRegistryError({ code: 'PLAN_REGISTRY_PLAN_NOT_FOUND', registry: this.description, planId });
    }
    // The plan's socket, from its id: an entry naming another socket is not followed.
    const socket = this.socketPath(planId, false);
    const socketProblem = this.socketProblem(socket);
    if (socketProblem !== undefined) {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_PLAN_NOT_FOUND',
        registry: this.description,
        planId,
        reason: `could not reach it (pid ${entry.pid}): ${socketProblem}`,
      });
    }
    const reply = await new Promise<string>((resolve, reject) => {
      const connection = net.connect(socket);
      let answer = '';
      const timer = setTimeout(() => {
        connection.destroy();
        reject(new Error(`it did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      connection.setEncoding('utf8');
      connection.on('connect', () => connection.write(`${JSON.stringify(checked)}\n`));
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
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_PLAN_NOT_FOUND',
        registry: this.description,
        planId,
        reason: `could not reach it (pid ${entry.pid}): ${error.message}`,
        cause: error,
      });
    });
    if (reply !== 'ok') {
      throw new PlanRegistryError({
        code: 'PLAN_REGISTRY_INVALID_ARGUMENT',
        registry: this.description,
        planId,
        reason: `the plan answered '${reply.slice(0, 200)}' instead of ok`,
      });
    }
    return { planId, delivery: 'delivered' };
  }

  /** Withdraws the plans this process announced. */
  async close(): Promise<void> {
    await Promise.all([...this.entries].map((entry) => entry.end()));
  }

  /** A request line: a control message as JSON, or `cancel` as earlier versions of the command send it. */
  private readRequest(line: string, planId: string): PlanControlMessage | undefined {
    const text = line.trim();
    if (text === 'cancel') return { kind: 'cancel', planId, reason: `cancelled by 'agents plan cancel ${planId}'`, sentAt: new Date().toISOString() };
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const message = parsePlanControlMessage(parsed);
    return message?.planId === planId ? message : undefined;
  }

  /** Why the socket at `socket` is not one a plan of this user listens on, or `undefined`. */
  private socketProblem(socket: string): string | undefined {
    if (process.platform === 'win32') return undefined;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(socket);
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT' ? `it has no socket at ${socket}` : (error as Error).message;
    }
    if (!stat.isSocket()) return `${socket} is not a socket`;
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) return `${socket} belongs to another user (uid ${stat.uid})`;
    return undefined;
  }

  private read(planId: string): RegisteredPlan | undefined {
    const file = this.entryPath(planId);
    let raw: Record<string, unknown>;
    try {
      // Only a regular file is read: a FIFO or a link in its place is no entry (and must not block the command).
      if (!fs.lstatSync(file).isFile()) return undefined;
      raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (typeof raw !== 'object' || raw === null) return undefined;
    // Entries written by earlier versions of the command carry only the plan file.
    const record =
      raw['policy'] === undefined && typeof raw['planFile'] === 'string'
        ? {
            planId: raw['planId'],
            pid: raw['pid'],
            startedAt: raw['startedAt'],
            heartbeatAt: raw['startedAt'],
            host: this.host,
            policy: {},
            tools: [],
            stepsDone: 0,
            labels: { file: raw['planFile'] },
          }
        : raw;
    const plan = parseRegisteredPlan(record);
    // An entry speaks for the plan its file is named after, or for none.
    return plan === undefined || plan.planId !== planId ? undefined : plan;
  }

  private write(record: StateEntry): void {
    const file = this.entryPath(record.planId);
    const temporary = `${file}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
    // Renamed into place, so `plan list` never reads half a record.
    fs.renameSync(temporary, file);
  }

  /** Removes a plan's entry and its socket: both paths follow from the plan id. */
  private remove(planId: string): void {
    fs.rmSync(this.entryPath(planId), { force: true });
    if (process.platform !== 'win32') fs.rmSync(this.socketPath(planId, false), { force: true });
  }

  private entryPath(planId: string): string {
    return path.join(this.plansDir, `${planId}.json`);
  }

  /**
   * The socket of a plan, from its id (which `planIdText` has checked: letters,
   * digits, `_`, `.`, `-`): `plans/<id>.sock`, or — when that path is too long
   * for a Unix socket — a hash of it in a folder of this user's own under the
   * system's temporary folder (checked as the state folder is, and made with
   * `create`), never a shared one where another user could listen first.
   */
  private socketPath(planId: string, create: boolean): string {
    const hash = createHash('sha256').update(`${this.plansDir}\0${planId}`).digest('hex').slice(0, 16);
    if (process.platform === 'win32') return `\\\\.\\pipe\\agents-${hash}`;
    const preferred = path.join(this.plansDir, `${planId}.sock`);
    // Unix socket paths are limited to about 104 bytes.
    if (Buffer.byteLength(preferred) < 100) return preferred;
    const folder = path.join(os.tmpdir(), `agents-${process.getuid?.() ?? 'user'}`);
    checkStateFolder(folder, 'sockets of running plans', { create });
    return path.join(folder, `${hash}.sock`);
  }
}
