import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { PRELUDE } from './prelude';
import { WORKER_SOURCE } from './worker-source';

/** The limits one program runs under, as the worker applies them. */
export interface SandboxLimits {
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly timeMs: number;
  /** Characters of the result's JSON and the logs together. */
  readonly outputChars: number;
}

/** A program to run: its code (JavaScript), the functions it sees, the clock and seed of its run. */
export interface SandboxProgram {
  readonly code: string;
  /** Identifiers of `tools.<ident>`, and the tool name each calls. */
  readonly idents: readonly string[];
  readonly names: readonly string[];
  readonly seed: number;
  readonly now: number;
  readonly limits: SandboxLimits;
}

/** A call the program made: a tool, or `search` / `describe`. */
export interface SandboxCall {
  readonly kind: 'tool' | 'search' | 'describe';
  readonly name: string;
  /** The input as JSON text, made in the sandbox. */
  readonly input: string;
}

/** The host's answer to a call: a value (JSON text), a failure (the JSON of the error's fields), or the end of the run. */
export type SandboxReply =
  | { readonly ok: true; readonly json: string | undefined }
  | { readonly ok: false; readonly json: string }
  | { readonly fatal: string; readonly fields?: Record<string, unknown> };

/** How a program ended, as the worker saw it. */
export type SandboxOutcome =
  | { readonly kind: 'returned'; readonly json: string | undefined }
  | {
      readonly kind: 'failed';
      readonly code: string;
      readonly error?: { readonly name?: string; readonly message?: string; readonly [key: string]: unknown };
      readonly crashed?: boolean;
    };

export interface SandboxLog {
  readonly level: string;
  readonly text: string;
}

/** What a finished run hands back. */
export interface SandboxResult {
  readonly outcome: SandboxOutcome;
  readonly logs: readonly SandboxLog[];
  /** Milliseconds the program ran in the engine (waits for the host's answers excluded). */
  readonly ms: number;
}

/** The host side of one run: answers calls, can stop the program. */
export interface SandboxRunHandlers {
  /** Answers one call; may be asynchronous. Never rejects (a rejection ends the run with `CODE_SANDBOX_FAILED`). */
  readonly onCall: (call: SandboxCall) => Promise<SandboxReply> | SandboxReply;
  /** Stops the run when it aborts (`CODE_STOPPED`, or the signal's reason if it is a code). */
  readonly signal?: AbortSignal;
}

/** Options of {@link SandboxPool}. */
export interface SandboxPoolOptions {
  /** Workers kept warm, and the most programs running at once (default 2). */
  readonly size?: number;
  /** Spare time past a run's time limit before its worker is terminated, in ms (default 250). */
  readonly graceMs?: number;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  flags: Int32Array;
  busy: boolean;
  /** The run in this worker, with the function that ends it when the worker dies. */
  run: ActiveRun | undefined;
  resolveReady: () => void;
  rejectReady: (error: Error) => void;
}

interface ActiveRun {
  readonly id: number;
  readonly handlers: SandboxRunHandlers;
  readonly finish: (result: SandboxResult) => void;
  /** Calls in flight at the host: while there are some, the program's time does not run at the host's watch. */
  inFlight: number;
  /** Host time counted against the limit, and since when it runs. */
  counted: number;
  countingSince: number | undefined;
  watchdog: NodeJS.Timeout | undefined;
  readonly limits: SandboxLimits;
  /** Set when the host ended the run (a limit at the host, a stop): the code it ends with, whatever the worker says. */
  stopCode: string | undefined;
}

let nextRunId = 0;

/** QuickJS compiled once per process and shared with every worker (a compiled module is cloned to a worker, its code shared); undefined if it cannot be read. */
let compiled: object | null | undefined;

/** The global WebAssembly (its types are not in this project's libs). */
const wasm = (globalThis as unknown as { WebAssembly: { Module: new (bytes: Uint8Array) => object } }).WebAssembly;

function compiledEngine(): object | undefined {
  if (compiled === undefined) {
    try {
      const variant = dirname(require.resolve('@jitl/quickjs-wasmfile-release-sync/package.json', { paths: [dirname(require.resolve('quickjs-emscripten'))] }));
      compiled = new wasm.Module(readFileSync(join(variant, 'dist', 'emscripten-module.wasm')));
    } catch {
      // Each worker then loads the engine itself.
      compiled = null;
    }
  }
  return compiled ?? undefined;
}

/**
 * A pool of worker threads, each with QuickJS loaded and warm, that run one
 * program at a time. A program never runs on the host's thread: the host
 * answers its calls by messages, and terminates (and replaces) a worker
 * whose program is over its time and does not stop, or whose engine failed.
 */
export class SandboxPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly size: number;
  private readonly graceMs: number;
  private closed = false;

  constructor(options: SandboxPoolOptions = {}) {
    this.size = options.size ?? 2;
    this.graceMs = options.graceMs ?? 250;
    for (let i = 0; i < this.size; i++) {
      const slot = this.spawn();
      this.slots.push(slot);
      this.listen(slot);
    }
  }

  /** Resolves when every worker is loaded and warm. */
  async warm(): Promise<void> {
    await Promise.all(this.slots.map((slot) => slot.ready));
  }

  /** Runs a program in the next free worker (waiting for one when all are busy). */
  async run(program: SandboxProgram, handlers: SandboxRunHandlers): Promise<SandboxResult> {
    if (this.closed) throw new Error('the sandbox pool was closed');
    const slot = await this.acquire(handlers.signal);
    try {
      await slot.ready;
    } catch {
      this.replace(slot);
      this.release(slot);
      return { outcome: { kind: 'failed', code: 'CODE_SANDBOX_FAILED', error: { message: 'the sandbox engine did not load' } }, logs: [], ms: 0 };
    }
    return new Promise<SandboxResult>((resolve) => {
      const id = ++nextRunId;
      let settled = false;
      const run: ActiveRun = {
        id,
        handlers,
        limits: program.limits,
        inFlight: 0,
        counted: 0,
        countingSince: performance.now(),
        watchdog: undefined,
        stopCode: undefined,
        finish: (result) => {
          if (settled) return;
          settled = true;
          slot.worker.unref();
          if (run.stopCode !== undefined && !(result.outcome.kind === 'failed' && result.outcome.code === run.stopCode)) {
            result = { ...result, outcome: { kind: 'failed', code: run.stopCode } };
          }
          if (run.watchdog !== undefined) clearTimeout(run.watchdog);
          handlers.signal?.removeEventListener('abort', onAbort);
          slot.run = undefined;
          this.release(slot);
          resolve(result);
        },
      };
      const onAbort = (): void => this.stop(slot, run, codeOf(handlers.signal?.reason) ?? 'CODE_STOPPED');
      slot.run = run;
      slot.worker.ref();
      Atomics.store(slot.flags, 0, 0);
      slot.worker.postMessage({
        t: 'run',
        id,
        code: program.code,
        idents: program.idents,
        names: program.names,
        seed: program.seed,
        now: program.now,
        limits: program.limits,
      });
      this.arm(slot, run);
      if (handlers.signal?.aborted === true) onAbort();
      else handlers.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Terminates every worker; runs in progress end with `CODE_STOPPED`. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    for (const slot of slots) slot.run?.finish({ outcome: { kind: 'failed', code: 'CODE_STOPPED' }, logs: [], ms: 0 });
    for (const resume of this.waiting.splice(0)) resume();
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  /** The watchdog: terminates the worker once the program has used its time and the grace, counting only while no call of it is at the host. */
  private arm(slot: Slot, run: ActiveRun): void {
    if (run.watchdog !== undefined) clearTimeout(run.watchdog);
    run.watchdog = undefined;
    if (run.countingSince === undefined) return;
    const left = run.limits.timeMs + this.graceMs - run.counted - (performance.now() - run.countingSince);
    run.watchdog = setTimeout(() => this.kill(slot, run, 'CODE_TIME_LIMIT'), Math.max(0, left));
    run.watchdog.unref?.();
  }

  /** Asks the program to stop (through the shared flag, read by the interrupt handler); terminates the worker if it does not within the grace. */
  private stop(slot: Slot, run: ActiveRun, code: string): void {
    if (slot.run !== run || run.stopCode !== undefined) return;
    run.stopCode = code;
    Atomics.store(slot.flags, 0, 1);
    slot.worker.postMessage({ t: 'stop', id: run.id, code });
    const timer = setTimeout(() => this.kill(slot, run, code), this.graceMs);
    timer.unref?.();
  }

  /** Ends the run with `code` and replaces its worker. */
  private kill(slot: Slot, run: ActiveRun, code: string): void {
    if (slot.run !== run) return;
    run.stopCode ??= code;
    const worker = slot.worker;
    this.replace(slot);
    void worker.terminate().catch(() => undefined);
    run.finish({ outcome: { kind: 'failed', code }, logs: [], ms: run.limits.timeMs });
  }

  /** A fresh worker in the slot's place (the old one is being terminated, or died). */
  private replace(slot: Slot): void {
    if (this.closed) return;
    const fresh = this.spawn();
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    slot.worker = fresh.worker;
    slot.ready = fresh.ready;
    slot.flags = fresh.flags;
    slot.resolveReady = fresh.resolveReady;
    slot.rejectReady = fresh.rejectReady;
    this.listen(slot);
  }

  private spawn(): Slot {
    const shared = new SharedArrayBuffer(4);
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { quickjs: require.resolve('quickjs-emscripten'), prelude: PRELUDE, flags: shared, wasmModule: compiledEngine() },
      // No environment of the host: the worker's process.env is empty (the program cannot reach it anyway).
      env: {},
      stdout: true,
      stderr: true,
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
    });
    worker.unref();
    let resolveReady!: () => void;
    let rejectReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      resolveReady = resolve;
      rejectReady = reject;
    });
    ready.catch(() => undefined);
    return { worker, ready, flags: new Int32Array(shared), busy: false, run: undefined, resolveReady, rejectReady };
  }

  private listen(slot: Slot): void {
    const worker = slot.worker;
    worker.removeAllListeners('message');
    worker.on('message', (message: WorkerMessage) => {
      if (worker !== slot.worker) return;
      if (message.t === 'ready') slot.resolveReady();
      else if (message.t === 'boot-failed') slot.rejectReady(new Error(message.message));
      else if (message.t === 'call') this.onCall(slot, message);
      else if (message.t === 'done') {
        const run = slot.run;
        // A worker that retires (its engine could not free the run) is replaced before the slot takes another run.
        if (message.retire === true) {
          this.replace(slot);
          void worker.terminate().catch(() => undefined);
        }
        if (run !== undefined && run.id === message.id) run.finish({ outcome: message.outcome, logs: message.logs, ms: message.ms });
      }
    });
    worker.on('error', () => undefined);
    worker.on('exit', () => {
      if (worker !== slot.worker || this.closed) return;
      slot.rejectReady(new Error('the sandbox worker exited'));
      const run = slot.run;
      this.replace(slot);
      run?.finish({ outcome: { kind: 'failed', code: 'CODE_SANDBOX_FAILED', crashed: true }, logs: [], ms: 0 });
    });
  }

  private onCall(slot: Slot, message: CallMessage): void {
    const run = slot.run;
    if (run === undefined || run.id !== message.id) return;
    if (run.inFlight++ === 0 && run.countingSince !== undefined) {
      run.counted += performance.now() - run.countingSince;
      run.countingSince = undefined;
      this.arm(slot, run);
    }
    const answer = (reply: SandboxReply): void => {
      if (slot.run !== run) return;
      if (--run.inFlight === 0) {
        run.countingSince = performance.now();
        this.arm(slot, run);
      }
      slot.worker.postMessage({ t: 'reply', id: run.id, callId: message.callId, ...reply });
      if ('fatal' in reply) {
        // The worker ends the run at once; if it is busy elsewhere, the flag and the watchdog end it.
        this.stop(slot, run, reply.fatal);
      }
    };
    let replied: Promise<SandboxReply> | SandboxReply;
    try {
      replied = run.handlers.onCall({ kind: message.kind, name: message.name, input: message.input });
    } catch (error) {
      replied = { fatal: 'CODE_SANDBOX_FAILED', fields: { error: { message: String((error as Error)?.message ?? error) } } };
    }
    if (replied instanceof Promise) {
      replied.then(answer, (error: unknown) =>
        answer({ fatal: 'CODE_SANDBOX_FAILED', fields: { error: { message: String((error as Error)?.message ?? error) } } }),
      );
    } else {
      answer(replied);
    }
  }

  private async acquire(signal: AbortSignal | undefined): Promise<Slot> {
    for (;;) {
      if (this.closed) throw new Error('the sandbox pool was closed');
      signal?.throwIfAborted();
      const free = this.slots.find((slot) => !slot.busy);
      if (free !== undefined) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => {
        const onAbort = (): void => resolve();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }
}

type CallMessage = { readonly t: 'call'; readonly id: number; readonly callId: number } & SandboxCall;
type WorkerMessage =
  | { readonly t: 'ready' }
  | { readonly t: 'boot-failed'; readonly message: string }
  | CallMessage
  | { readonly t: 'done'; readonly id: number; readonly outcome: SandboxOutcome; readonly logs: SandboxLog[]; readonly ms: number; readonly retire?: boolean };

function codeOf(reason: unknown): string | undefined {
  const code = (reason as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('CODE_') ? code : undefined;
}
