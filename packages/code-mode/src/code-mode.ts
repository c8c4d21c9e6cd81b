import { createHash } from 'node:crypto';
import { normalizeCapability } from '@ca/domain';
import type { PlanContext, ToolExecutionContext } from '@ca/tool-context';
import {
  ToolInvalidArgumentError,
  innerCallStep,
  toolFailure,
  toolSuccess,
  type ExecuteOptions,
  type ExecutionResult,
  type ToolCaller,
  type ToolDescriptor,
  type ToolInstance,
  type ToolResult,
  type ToolRuntime,
  type ToolSource,
} from '@ca/tool-lifecycle';
import { declareApi, declareTool, type DeclarationOptions } from './api/declarations';
import { ToolNames } from './api/tool-names';
import { CodeModeError, type CodeModeErrorCode, type PendingInnerCall } from './errors';
import { SandboxPool, type SandboxCall, type SandboxPoolOptions, type SandboxReply, type SandboxResult } from './sandbox/sandbox-pool';
import { stripTypes } from './strip-types';

/** Limits of one program run; each, when reached, ends the run with a coded error naming it. */
export interface CodeLimits {
  /** Time the program may run in the engine, in ms (waits for its tool calls not counted). Default 5,000. */
  readonly timeMs: number;
  /** Memory of the program's engine, in bytes. Default 64 MiB. */
  readonly memoryBytes: number;
  /** The engine's stack, in bytes (at most 320 KiB: more overflows the host's own stack). Default 256 KiB. */
  readonly stackBytes: number;
  /** Calls the program may make (tools, `search`, `describe`). Default 100. */
  readonly maxCalls: number;
  /** Calls in flight at once. Default 16. */
  readonly maxConcurrentCalls: number;
  /** Characters of the result's JSON and the logs together. Default 64,000. */
  readonly maxOutputChars: number;
  /** Characters of the program's source. Default 100,000. */
  readonly maxCodeChars: number;
}

/** The defaults of {@link CodeLimits}. */
export const DEFAULT_CODE_LIMITS: CodeLimits = Object.freeze({
  timeMs: 5_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 100,
  maxConcurrentCalls: 16,
  maxOutputChars: 64_000,
  maxCodeChars: 100_000,
});

const MAX_STACK_BYTES = 320 * 1024;

/** An inner call, as `suspend` is asked about it. */
export interface InnerCall {
  readonly descriptor: ToolDescriptor;
  readonly input: unknown;
  readonly ctx: PlanContext;
  /** Its step id, `<run step>/<n>`. */
  readonly step: string;
}

/** Settings of {@link createCodeMode}. */
export interface CodeModeOptions {
  /** The runtime every inner call goes through; a function when the runtime is made after the code mode (its sources include {@link CodeMode.source}). */
  readonly runtime: ToolRuntime | (() => ToolRuntime);
  /** The tool's name (default `code.run`). */
  readonly toolName?: string;
  /** Limits of each run (defaults {@link DEFAULT_CODE_LIMITS}). */
  readonly limits?: Partial<CodeLimits>;
  /** The worker pool programs run in: a pool to share, or the options of this code mode's own (default 2 workers). */
  readonly pool?: SandboxPool | SandboxPoolOptions;
  /** Which tools of the catalog the program sees (default all but `code.run` itself). */
  readonly include?: (descriptor: ToolDescriptor) => boolean;
  /** How the declarations are written. */
  readonly declarations?: DeclarationOptions;
  /**
   * Asked before each inner call: true when the call must wait for a person
   * through the caller's own approval flow (AI SDK approval parts, Agents
   * interruptions, LangChain HITL). The run then ends with
   * `CODE_APPROVAL_PENDING` carrying the inner call; once the person has
   * answered (for instance `FrameworkApprovals.grant`), run the same program
   * under the same step: the calls already made are answered from the plan's
   * call journal, the clock and randomness are the same, and this call is not
   * asked about again but goes to the runtime's approval handler. Without it,
   * an inner call that needs approval waits for the runtime's handler while
   * the program waits.
   */
  readonly suspend?: (call: InnerCall) => boolean | Promise<boolean>;
}

/** Input of `code.run`. */
export interface CodeRunInput {
  /** The program: the body of an async function, JavaScript or TypeScript; `return` gives the result. */
  readonly code: string;
}

/** Output of `code.run`. */
export interface CodeRunOutput {
  /** What the program returned (JSON), absent when it returned nothing. */
  readonly result?: unknown;
  /** What it logged, one entry per `console.*` call (`[warn] …` for other levels than `log`). */
  readonly logs: readonly string[];
}

/** Options of {@link CodeMode.run}: those of `execute` (its `step` names the run, for resuming after an approval). */
export type CodeRunOptions = Omit<ExecuteOptions, 'parentExecutionId'>;

/** Code mode over a runtime: one tool, `code.run`, whose program calls the plan's tools. */
export interface CodeMode {
  /** The tool's name. */
  readonly toolName: string;
  /** The tool's descriptor (input `{ code }`, output `{ result, logs }`). */
  readonly descriptor: ToolDescriptor;
  /** A source with the one tool, for the runtime's `sources`. */
  readonly source: ToolSource;
  /** The limits runs use. */
  readonly limits: CodeLimits;
  /** The `.d.ts` text of the API the program sees (the plan's tools, `search`, `describe`); with `names`, only those tools. */
  declarations(options?: { readonly names?: readonly string[] }): Promise<string>;
  /** The tool's description for a model: what it does and the declarations. */
  description(options?: { readonly names?: readonly string[] }): Promise<string>;
  /** Runs a program in the plan of `ctx`: `runtime.execute(toolName, { code }, ctx, options)`. */
  run(code: string, ctx: PlanContext, options?: CodeRunOptions): Promise<ExecutionResult<CodeRunOutput>>;
  /** Resolves when the pool's workers are loaded. */
  warm(): Promise<void>;
  /** Terminates the pool's workers (a shared pool is left to its owner). */
  close(): Promise<void>;
}

/** What a run keeps across its replays (same plan, same step): the clock and seed, and the inner calls already let through. */
interface RunState {
  readonly seed: number;
  readonly now: number;
  /** Steps of inner calls that were pending: not asked about again. */
  readonly answered: Set<string>;
}

/**
 * Makes the code mode of a runtime: `code.run` as a tool (put `source` in the
 * runtime's sources), the declarations a model reads, and `run`.
 * @throws ToolInvalidArgumentError for invalid options.
 */
export function createCodeMode(options: CodeModeOptions): CodeMode {
  if (typeof options !== 'object' || options === null) {
    throw new ToolInvalidArgumentError({ argument: 'options', expected: 'an object { runtime, … }', received: options });
  }
  const { runtime: runtimeOption } = options;
  if (typeof runtimeOption !== 'function' && (typeof runtimeOption !== 'object' || runtimeOption === null || typeof runtimeOption.execute !== 'function')) {
    throw new ToolInvalidArgumentError({ argument: 'options.runtime', expected: 'a ToolRuntime, or a function that returns it', received: runtimeOption });
  }
  const runtimeOf = (): ToolRuntime => (typeof runtimeOption === 'function' ? runtimeOption() : runtimeOption);
  const toolName = options.toolName ?? 'code.run';
  if (typeof toolName !== 'string' || toolName.length === 0 || toolName.length > 200) {
    throw new ToolInvalidArgumentError({ argument: 'options.toolName', expected: 'a tool name of 1–200 characters', received: toolName });
  }
  const limits = checkLimits(options.limits);
  const ownPool = !(options.pool instanceof SandboxPool);
  const pool = options.pool instanceof SandboxPool ? options.pool : new SandboxPool(options.pool);
  const include = options.include;
  const descriptor: ToolDescriptor = Object.freeze({
    name: toolName,
    description:
      'Runs a JavaScript or TypeScript program (an async function body) that calls tools as `await tools.<ident>(input)`; returns its return value and logs. Each call goes through the plan.',
    source: 'custom',
    // The program itself changes nothing: each of its calls is checked (capability, approval) on its own.
    capability: normalizeCapability({ writes: false, checkpointable: true, idempotent: false, destructive: false, openWorld: false }),
    inputSchema: {
      type: 'object',
      properties: {
        code: { type: 'string', minLength: 1, maxLength: limits.maxCodeChars, description: 'Program body; `return` the result.' },
      },
      required: ['code'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { result: {}, logs: { type: 'array', items: { type: 'string' } } },
      required: ['logs'],
    },
  });

  const runs = new WeakMap<PlanContext, Map<string, RunState>>();
  let catalogCache: { readonly list: readonly ToolDescriptor[]; readonly names: ToolNames; readonly byName: Map<string, ToolDescriptor> } | undefined;

  const catalog = async (): Promise<NonNullable<typeof catalogCache>> => {
    const list = await runtimeOf().listTools();
    if (catalogCache !== undefined && catalogCache.list === list) return catalogCache;
    const visible = list.filter((tool) => tool.name !== toolName && (include === undefined || include(tool)));
    const names = new ToolNames(visible.map((tool) => tool.name));
    catalogCache = { list, names, byName: new Map(visible.map((tool) => [tool.name, tool])) };
    return catalogCache;
  };

  const declarations = async (declarationOptions: { readonly names?: readonly string[] } = {}): Promise<string> => {
    const { names, byName } = await catalog();
    const wanted = declarationOptions.names === undefined ? [...byName.keys()] : declarationOptions.names.filter((name) => byName.has(name));
    const tools = wanted.sort().map((name) => ({ ident: names.identOf(name) as string, descriptor: byName.get(name) as ToolDescriptor }));
    return declareApi(tools, options.declarations);
  };

  const instance: ToolInstance<CodeRunInput, CodeRunOutput> = {
    descriptor: descriptor as ToolInstance<CodeRunInput, CodeRunOutput>['descriptor'],
    execute: (input, view) => execute(input, view),
  };

  const execute = async (input: CodeRunInput, view: ToolExecutionContext): Promise<ToolResult<CodeRunOutput>> => {
    const runtime = runtimeOf();
    const caller = runtime.callerOf(view);
    const fail = (
      code: CodeModeErrorCode,
      detail: string,
      extra: Partial<ConstructorParameters<typeof CodeModeError>[0]> = {},
      logs: readonly string[] = [],
    ): ToolResult<CodeRunOutput> => toolFailure(new CodeModeError({ code, detail, toolName, planId: view.planId, ...extra }), { output: { logs } });
    if (caller === undefined)
      return fail('CODE_SANDBOX_FAILED', `'${toolName}' was called outside an execution of its runtime, so its calls would have no plan`);
    if (typeof input?.code !== 'string') return fail('CODE_INPUT_INVALID', 'the input has no program (code)');
    const { names, byName } = await catalog();
    const { idents, names: toolNames } = names.entries();
    const ctx = caller.ctx;
    // A resumed run (`<step>#resume-<n>`, see PendingInnerCall.resumeStep) is the run of `<step>`: same inner steps, clock and seed.
    const runKey = caller.step === undefined ? caller.executionId : runKeyOf(caller.step);
    let plans = runs.get(ctx);
    if (plans === undefined) runs.set(ctx, (plans = new Map()));
    let state = plans.get(runKey);
    if (state === undefined) {
      state = { seed: caller.step === undefined ? (Math.random() * 2 ** 32) >>> 0 : seedOf(ctx.planId, runKey), now: Date.now(), answered: new Set() };
      plans.set(runKey, state);
    }
    const run = new ProgramRun(runtime, { ...caller, step: runKey }, limits, names, byName, state, options.suspend);
    let result: SandboxResult;
    const sandboxLimits = { memoryBytes: limits.memoryBytes, stackBytes: limits.stackBytes, timeMs: limits.timeMs, outputChars: limits.maxOutputChars };
    const runCode = (code: string): Promise<SandboxResult> =>
      pool.run(
        { code, idents, names: toolNames, seed: state.seed, now: state.now, limits: sandboxLimits },
        { onCall: (call) => run.call(call), signal: view.signal },
      );
    try {
      // JavaScript runs as it is; a program that does not parse as JavaScript is run again with its types removed
      // (it did nothing the first time: it did not compile). Stripping every program would cost 1–3 ms a run.
      result = await runCode(input.code);
      if (result.outcome.kind === 'failed' && result.outcome.code === 'CODE_SYNTAX_ERROR') {
        const stripped = stripTypes(input.code);
        if (stripped !== input.code) result = await runCode(stripped);
      }
    } catch (error) {
      if (view.signal.aborted) return fail('CODE_STOPPED', 'the run was cancelled before it started');
      return fail('CODE_SANDBOX_FAILED', `the sandbox could not run the program (${String((error as Error)?.message ?? error)})`, { cause: error });
    }
    const logs = result.logs.map((log) => (log.level === 'log' ? log.text : `[${log.level}] ${log.text}`));
    const { outcome } = result;
    if (outcome.kind === 'returned') {
      if (outcome.json === undefined) return toolSuccess({ logs });
      return toolSuccess({ result: JSON.parse(outcome.json) as unknown, logs });
    }
    const code = outcome.code as CodeModeErrorCode;
    if (code === 'CODE_APPROVAL_PENDING' && run.pending !== undefined) {
      state.answered.add(run.pending.step);
      return fail(code, `inner call ${run.pending.step} of '${run.pending.toolName}' waits for approval`, { pending: run.pending }, logs);
    }
    const thrown = outcome.error === undefined ? undefined : fieldsOf(outcome.error);
    return fail(code, detailOf(code, limits, thrown, run), { ...limitValue(code, limits), ...(thrown === undefined ? {} : { thrown }) }, logs);
  };

  const source: ToolSource = {
    kind: 'custom',
    id: `code-mode:${toolName}`,
    schemaTrust: 'trusted',
    discover: async () => [descriptor],
    get: (name: string) => {
      if (name !== toolName) throw new ToolInvalidArgumentError({ argument: 'name', expected: `'${toolName}'`, received: name });
      return instance as ToolInstance;
    },
  };

  return Object.freeze({
    toolName,
    descriptor,
    source,
    limits,
    declarations,
    description: async (descriptionOptions?: { readonly names?: readonly string[] }) =>
      `${descriptor.description} ${rulesOf(limits)}\n${await declarations(descriptionOptions)}`,
    run: (code: string, ctx: PlanContext, runOptions?: CodeRunOptions) => runtimeOf().execute<CodeRunOutput>(toolName, { code }, ctx, runOptions),
    warm: async () => {
      // The type stripper's first run compiles much of it: made here, not in the first program.
      stripTypes('const warm: number = 1;');
      await pool.warm();
    },
    close: () => (ownPool ? pool.close() : Promise.resolve()),
  });
}

/** The host side of one run: each call of the program, through the runtime, within the run's call limits. */
class ProgramRun {
  private ordinal = 0;
  private inFlight = 0;
  /** The inner call the run stopped at, waiting for approval. */
  pending: PendingInnerCall | undefined;

  constructor(
    private readonly runtime: ToolRuntime,
    private readonly caller: ToolCaller,
    private readonly limits: CodeLimits,
    private readonly names: ToolNames,
    private readonly byName: ReadonlyMap<string, ToolDescriptor>,
    private readonly state: RunState,
    private readonly suspend: CodeModeOptions['suspend'],
  ) {}

  async call(call: SandboxCall): Promise<SandboxReply> {
    if (++this.ordinal > this.limits.maxCalls) return { fatal: 'CODE_CALL_LIMIT' };
    if (this.inFlight >= this.limits.maxConcurrentCalls) return { fatal: 'CODE_CONCURRENCY_LIMIT' };
    this.inFlight++;
    try {
      const input = parseInput(call.input);
      if (call.kind === 'search') return await this.search(input);
      if (call.kind === 'describe') return await this.describe(input);
      return await this.tool(call.name, input);
    } catch (error) {
      return { ok: false, json: errorJson(error) };
    } finally {
      this.inFlight--;
    }
  }

  private async tool(name: string, input: unknown): Promise<SandboxReply> {
    const { caller } = this;
    const descriptor = this.byName.get(name);
    if (descriptor === undefined) {
      return {
        ok: false,
        json: JSON.stringify({
          name: 'ToolNotFoundError',
          code: 'TOOL_NOT_FOUND',
          toolName: String(name).slice(0, 200),
          message: `No tool '${String(name).slice(0, 200)}' in this program's API.`,
        }),
      };
    }
    const step = innerCallStep(caller, this.ordinal);
    if (this.suspend !== undefined && !this.state.answered.has(step) && (await this.suspend({ descriptor, input, ctx: caller.ctx, step }))) {
      this.pending = Object.freeze({
        toolName: name,
        input,
        step,
        parentExecutionId: caller.executionId,
        resumeStep: `${caller.step as string}${RESUME}${this.ordinal}`,
      });
      return { fatal: 'CODE_APPROVAL_PENDING' };
    }
    let result: ExecutionResult;
    try {
      result = await this.runtime.execute(name, input, caller.ctx, { parentExecutionId: caller.executionId, step });
    } catch (error) {
      return { ok: false, json: errorJson(error) };
    }
    if (!result.ok) return { ok: false, json: errorJson(result.error, name) };
    const output = result.output === undefined ? textOf(result.content) : result.output;
    return { ok: true, json: output === undefined ? undefined : JSON.stringify(output) };
  }

  private async search(input: unknown): Promise<SandboxReply> {
    const { query, limit } = (input ?? {}) as { query?: unknown; limit?: unknown };
    const k = typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? Math.min(limit, 50) : 10;
    const hits = await this.runtime.searchTools(String(query ?? ''), { k: k + 1, ctx: this.caller.ctx });
    const found = hits
      .filter((hit) => this.names.has(hit.name))
      .slice(0, k)
      .map((hit) => ({ name: hit.name, ident: this.names.identOf(hit.name), description: hit.description }));
    return { ok: true, json: JSON.stringify(found) };
  }

  private async describe(input: unknown): Promise<SandboxReply> {
    const wanted = String((input as { name?: unknown } | null)?.name ?? '');
    const name = this.names.has(wanted) ? wanted : this.names.nameOf(wanted);
    const descriptor = name === undefined ? undefined : this.byName.get(name);
    if (name === undefined || descriptor === undefined) {
      return {
        ok: false,
        json: JSON.stringify({
          name: 'ToolNotFoundError',
          code: 'TOOL_NOT_FOUND',
          toolName: wanted.slice(0, 200),
          message: `No tool '${wanted.slice(0, 200)}' in this program's API; search(query) lists them.`,
        }),
      };
    }
    const ident = this.names.identOf(name) as string;
    return {
      ok: true,
      json: JSON.stringify({
        name,
        ident,
        description: descriptor.description,
        ...(descriptor.inputSchema === undefined ? {} : { inputSchema: descriptor.inputSchema }),
        ...(descriptor.outputSchema === undefined ? {} : { outputSchema: descriptor.outputSchema }),
        declaration: declareTool(ident, descriptor, { descriptionChars: 0, depth: 6 }),
      }),
    };
  }
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

/** A failure as the program gets it: the coded error's fields (strings, numbers, booleans), as JSON text. */
function errorJson(error: unknown, toolName?: string): string {
  const fields: Record<string, string | number | boolean> = {};
  const source = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as Record<string, unknown>;
  for (const key of ['name', 'code', 'message', 'toolName', 'planId', 'denial', 'reason', 'limit', 'scope', 'decidedBy', 'retryable', 'direction']) {
    let value: unknown;
    try {
      value = source[key];
    } catch {
      continue;
    }
    if (typeof value === 'string') fields[key] = value.slice(0, 4_000);
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  if (fields['code'] === undefined) fields['code'] = 'TOOL_EXECUTION_FAILED';
  if (fields['toolName'] === undefined && toolName !== undefined) fields['toolName'] = toolName;
  // A schema validation failure lists what was wrong: the program can correct its input.
  const issues = (source as { issues?: unknown }).issues;
  if (Array.isArray(issues)) {
    return JSON.stringify({ ...fields, issues: issues.slice(0, 20).map((issue) => String((issue as { message?: unknown })?.message ?? issue).slice(0, 300)) });
  }
  return JSON.stringify(fields);
}

/** The text of content blocks, for a tool that gave no structured output. */
function textOf(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((block) => block?.type === 'text' && typeof block.text === 'string').map((block) => block.text as string);
  return texts.length === 0 ? undefined : texts.join('\n');
}

function fieldsOf(error: Readonly<Record<string, unknown>>): Record<string, string | number | boolean> {
  const fields: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string') fields[key] = value.slice(0, 4_000);
    else if (typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return fields;
}

function limitValue(code: CodeModeErrorCode, limits: CodeLimits): { value?: number } {
  const value: Partial<Record<CodeModeErrorCode, number>> = {
    CODE_TIME_LIMIT: limits.timeMs,
    CODE_MEMORY_LIMIT: limits.memoryBytes,
    CODE_STACK_LIMIT: limits.stackBytes,
    CODE_CALL_LIMIT: limits.maxCalls,
    CODE_CONCURRENCY_LIMIT: limits.maxConcurrentCalls,
    CODE_OUTPUT_LIMIT: limits.maxOutputChars,
  };
  return value[code] === undefined ? {} : { value: value[code] };
}

function detailOf(code: CodeModeErrorCode, limits: CodeLimits, thrown: Record<string, string | number | boolean> | undefined, run: ProgramRun): string {
  const what =
    thrown === undefined
      ? ''
      : `${String(thrown['name'] ?? 'Error')}${thrown['code'] === undefined ? '' : ` ${String(thrown['code'])}`}: ${String(thrown['message'] ?? '')}`;
  switch (code) {
    case 'CODE_TIME_LIMIT':
      return `the program ran over its time limit of ${limits.timeMs} ms and was stopped`;
    case 'CODE_MEMORY_LIMIT':
      return `the program ran out of its memory limit of ${limits.memoryBytes} bytes`;
    case 'CODE_STACK_LIMIT':
      return `the program overflowed its stack limit of ${limits.stackBytes} bytes`;
    case 'CODE_CALL_LIMIT':
      return `the program made more than ${limits.maxCalls} calls (its call limit)`;
    case 'CODE_CONCURRENCY_LIMIT':
      return `the program had more than ${limits.maxConcurrentCalls} calls in flight at once (its concurrency limit)`;
    case 'CODE_OUTPUT_LIMIT':
      return `the program's result and logs were over the output limit of ${limits.maxOutputChars} characters`;
    case 'CODE_SYNTAX_ERROR':
      return `the program does not parse (${what})`;
    case 'CODE_RESULT_INVALID':
      return `the program returned a value that is not JSON (${what})`;
    case 'CODE_NEVER_SETTLED':
      return 'the program awaits a promise that nothing will settle';
    case 'CODE_STOPPED':
      return 'the run was stopped';
    case 'CODE_SANDBOX_FAILED':
      return `the sandbox failed${what === '' ? '' : ` (${what})`}`;
    default:
      return run.pending === undefined ? `the program threw ${what}` : `the program threw ${what}`;
  }
}

/**
 * What the model needs besides the declarations, short (it is sent with every request): how a
 * failed call shows, and the limits of a run in one line.
 */
function rulesOf(limits: CodeLimits): string {
  const time = limits.timeMs % 1000 === 0 ? `${limits.timeMs / 1000} s` : `${limits.timeMs} ms`;
  const memory = `${Math.round(limits.memoryBytes / 2 ** 20)} MiB`;
  return (
    'A failed call throws an Error with .code, .message, .toolName. ' +
    `Limits: ${time}, ${memory}, ${limits.maxCalls} calls, ${limits.maxConcurrentCalls} at once, ${limits.maxOutputChars} chars of output; no timers, network, files, env.`
  );
}

function checkLimits(given: Partial<CodeLimits> | undefined): CodeLimits {
  if (given === undefined) return DEFAULT_CODE_LIMITS;
  if (typeof given !== 'object' || given === null)
    throw new ToolInvalidArgumentError({ argument: 'options.limits', expected: 'an object of limits', received: given });
  const limits: Record<string, number> = { ...DEFAULT_CODE_LIMITS };
  for (const [key, value] of Object.entries(given)) {
    if (!(key in DEFAULT_CODE_LIMITS))
      throw new ToolInvalidArgumentError({
        argument: `options.limits.${key}`,
        expected: `one of ${Object.keys(DEFAULT_CODE_LIMITS).join(', ')}`,
        received: key,
      });
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
      throw new ToolInvalidArgumentError({ argument: `options.limits.${key}`, expected: 'a whole number ≥ 1', received: value });
    }
    limits[key] = value;
  }
  if ((limits['stackBytes'] as number) > MAX_STACK_BYTES) {
    throw new ToolInvalidArgumentError({
      argument: 'options.limits.stackBytes',
      expected: `at most ${MAX_STACK_BYTES} (a deeper engine stack overflows the host's own)`,
      received: limits['stackBytes'],
    });
  }
  if ((limits['memoryBytes'] as number) < 1024 * 1024) {
    throw new ToolInvalidArgumentError({ argument: 'options.limits.memoryBytes', expected: 'at least 1 MiB', received: limits['memoryBytes'] });
  }
  return Object.freeze(limits as unknown as CodeLimits);
}

/** What a resumed run's step adds to the step of the run it resumes. */
const RESUME = '#resume-';

/** The step of the run a step names: itself, or for a resumed run (`<step>#resume-<n>`) the step it resumes. */
function runKeyOf(step: string): string {
  const at = step.lastIndexOf(RESUME);
  return at > 0 && /^[0-9]+$/.test(step.slice(at + RESUME.length)) ? step.slice(0, at) : step;
}

/** The seed of a run's randomness: the same for the same plan and step, in every process. */
function seedOf(planId: string, step: string): number {
  return createHash('sha256').update(`${planId}\0${step}`).digest().readUInt32BE(0);
}
