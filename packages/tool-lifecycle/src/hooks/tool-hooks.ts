import { describeValue } from '@ca/domain';
import { ToolSchemaValidationError } from '@ca/schema';
import { ToolCancelledError, type ToolExecutionTraceHook, type ToolHookOutcome, type ToolHookStage } from '@ca/tool-context';
import { compileToolPattern, type PatternMatcher } from '../approval';
import type { RegisteredTool } from '../catalog';
import { ToolHookError, ToolHookRefusedError, ToolInvalidArgumentError, type ToolHookFailure } from '../errors';
import { codedError, extraOf, type Execution } from '../observability';
import type { ToolFailure, ToolResult } from '../tool';
import { HookCallContext } from './hook-context';
import type { ToolFailedCall, ToolHook } from './tool-hook';

/** How long a hook's promise may take by default, in ms. */
export const DEFAULT_HOOK_TIMEOUT_MS = 10_000;
/** Longest note a hook may add, in characters; a longer one is cut. */
export const MAX_HOOK_NOTE_LENGTH = 8_192;
const MAX_HOOKS = 100;

/** A hook with its tool patterns compiled. */
interface CompiledHook {
  readonly hook: ToolHook;
  readonly name: string;
  readonly matches: PatternMatcher | undefined;
  readonly timeoutMs: number;
}

/** The hooks that run around one tool's calls, by stage; kept on the registered tool. */
export interface AppliedHooks {
  readonly before: readonly CompiledHook[];
  readonly after: readonly CompiledHook[];
  readonly error: readonly CompiledHook[];
}

/**
 * One stage's part in running hooks: how a hook is asked (`input` is what the
 * stage passes through: the call's input, or the failed call) and what its
 * decision does to the state. One object per stage, made once: the hooks
 * step makes no closure per call.
 */
interface Step<S> {
  readonly call: (entry: CompiledHook, state: S, context: HookCallContext, input: unknown) => unknown;
  readonly apply: (self: ToolHooks, entry: CompiledHook, decision: Decision, state: S, execution: Execution, tool: RegisteredTool) => S;
  readonly stop?: (state: S) => boolean;
}

const NONE: AppliedHooks = Object.freeze({ before: [], after: [], error: [] });

/** A step of hooks that is waiting for a hook's promise. */
export class HookPending<T> {
  constructor(readonly promise: Promise<T>) {}
}

/** A decision as the runner reads it: what the stage allows, checked. */
interface Decision {
  readonly decision: string;
  readonly note?: unknown;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly content?: unknown;
  readonly redactions?: unknown;
  readonly reason?: unknown;
}

const ALLOWED: Readonly<Record<ToolHookStage, readonly string[]>> = {
  before: ['continue', 'rewrite', 'refuse'],
  after: ['continue', 'replace', 'redact', 'withhold'],
  error: ['continue'],
};

/**
 * The hooks step of `execute`: before the call (after input validation), after
 * a successful call, and on a failed one. Each hook's decision and time go to
 * the execution's trace, its notes to the result. Synchronous hooks run
 * without a promise; a hook's promise is raced against its deadline and the
 * plan's cancellation. A hook that fails fails the execution closed.
 */
export class ToolHooks {
  private readonly hooks: readonly CompiledHook[];

  private constructor(
    hooks: readonly CompiledHook[],
    private readonly monotonic: () => number,
  ) {
    this.hooks = hooks;
  }

  /**
   * The hooks step for `hooks`, or undefined when there is none (so the
   * runtime skips the step at no cost).
   * @throws ToolInvalidArgumentError for a hook of the wrong shape, a duplicate name or a broken pattern.
   */
  static create(hooks: readonly ToolHook[] | undefined, monotonic: () => number): ToolHooks | undefined {
    if (hooks === undefined) return undefined;
    if (!Array.isArray(hooks) || hooks.length > MAX_HOOKS) {
      throw new ToolInvalidArgumentError({ argument: 'hooks', expected: `a list of at most ${MAX_HOOKS} ToolHooks`, received: hooks });
    }
    if (hooks.length === 0) return undefined;
    const names = new Set<string>();
    const compiled = hooks.map((hook, index) => {
      const at = `hooks[${index}]`;
      const fail = (field: string, expected: string, received: unknown): never => {
        throw new ToolInvalidArgumentError({ argument: `${at}${field}`, expected, received });
      };
      if (typeof hook !== 'object' || hook === null) fail('', 'a ToolHook: { name, before?, after?, onError? }', hook);
      const { name, tools, timeoutMs, before, after, onError } = hook;
      if (typeof name !== 'string' || name.length === 0 || name.length > 200) fail('.name', 'a name of 1–200 characters', name);
      if (names.has(name)) fail('.name', 'a name no other hook of the runtime has', name);
      names.add(name);
      for (const [key, value] of [
        ['before', before],
        ['after', after],
        ['onError', onError],
      ] as const) {
        if (value !== undefined && typeof value !== 'function') fail(`.${key}`, 'a function', value);
      }
      if (before === undefined && after === undefined && onError === undefined) fail('', 'a hook with before, after or onError', hook);
      if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0 && timeoutMs <= 2_147_483_647)) {
        fail('.timeoutMs', 'a positive number of milliseconds (at most 2147483647)', timeoutMs);
      }
      const patterns: readonly string[] | undefined = tools === undefined ? undefined : typeof tools === 'string' ? [tools] : tools;
      if (
        patterns !== undefined &&
        (!Array.isArray(patterns) || patterns.length === 0 || patterns.some((pattern) => typeof pattern !== 'string' || pattern.length === 0))
      ) {
        fail('.tools', 'a tool-name glob or a non-empty list of them', tools);
      }
      const matchers = patterns?.map((pattern) => compileToolPattern(pattern));
      return {
        hook,
        name,
        matches: matchers === undefined ? undefined : (text: string) => matchers.some((matches) => matches(text)),
        timeoutMs: timeoutMs ?? DEFAULT_HOOK_TIMEOUT_MS,
      };
    });
    return new ToolHooks(compiled, monotonic);
  }

  /** The hooks of each stage that match the tool, worked out once per registered tool. */
  appliedTo(tool: RegisteredTool): AppliedHooks {
    if (tool.hooks !== undefined) return tool.hooks as AppliedHooks;
    const name = tool.descriptor.name;
    const matching = this.hooks.filter((entry) => entry.matches === undefined || entry.matches(name));
    const applied =
      matching.length === 0
        ? NONE
        : Object.freeze({
            before: matching.filter((entry) => entry.hook.before !== undefined),
            after: matching.filter((entry) => entry.hook.after !== undefined),
            error: matching.filter((entry) => entry.hook.onError !== undefined),
          });
    tool.hooks = applied;
    return applied;
  }

  /**
   * Before the call: each hook in turn may let it go on, rewrite the input
   * (validated against the tool's input schema again) or refuse it. Returns
   * the input to call with, or a pending step.
   * @throws ToolHookRefusedError, ToolHookError.
   */
  before(execution: Execution, tool: RegisteredTool, input: unknown): unknown {
    const hooks = this.appliedTo(tool).before;
    if (hooks.length === 0) return input;
    return this.run(hooks, 0, execution, tool, 'before', input, undefined, ToolHooks.beforeStep);
  }

  /** What a hook before the call is asked, and what its decision does (made once: no closure per call). */
  private static readonly beforeStep: Step<unknown> = {
    call: (entry, current, context) => entry.hook.before?.(current, context),
    apply: (self, entry, decision, current, execution, tool) => {
      if (decision.decision === 'refuse') {
        throw new ToolHookRefusedError({
          hook: entry.name,
          stage: 'before',
          toolName: execution.toolName,
          planId: execution.ctx.planId,
          reason: decision.reason as string,
        });
      }
      if (decision.decision !== 'rewrite') return current;
      const check = tool.input?.validate(decision.input);
      if (check !== undefined && !check.valid) {
        const cause = new ToolSchemaValidationError({ direction: 'input', issues: check.issues, toolName: execution.toolName, planId: execution.ctx.planId });
        throw self.failure(execution, entry, 'before', 'invalid-input', { cause });
      }
      return decision.input;
    },
  };

  /**
   * After the call, on what the tool returned: on a success, each hook in turn
   * may let the output through, replace or redact it (validated against the
   * output schema again) or withhold it; on a reported failure, the error
   * hooks may add notes. Returns the result to finish with, or a pending step.
   * @throws ToolHookError.
   */
  after(execution: Execution, tool: RegisteredTool, input: unknown, raw: unknown): unknown {
    const result = raw as ToolResult | null;
    if (typeof result !== 'object' || result === null) return raw;
    if (result.ok === false) {
      if (!(result.error instanceof Error)) return raw;
      const noted = this.onError(execution, tool, input, result.error, result.output);
      return noted instanceof HookPending ? new HookPending(noted.promise.then(() => raw)) : raw;
    }
    if (result.ok !== true) return raw;
    const hooks = this.appliedTo(tool).after;
    if (hooks.length === 0) return raw;
    return this.run<ToolResult>(hooks, 0, execution, tool, 'after', result, input, ToolHooks.afterStep);
  }

  /** What a hook on a failed call is asked (the failed call comes as `input`); it only notes. */
  private static readonly errorStep: Step<undefined> = {
    call: (entry, _current, context, failed) => entry.hook.onError?.(failed as ToolFailedCall, context),
    apply: () => undefined,
  };

  /** What a hook after the call is asked, and what its decision does. */
  private static readonly afterStep: Step<ToolResult> = {
    call: (entry, current, context, input) =>
      entry.hook.after?.(
        current.content === undefined
          ? { input, output: current.ok ? current.output : undefined }
          : { input, output: current.ok ? current.output : undefined, content: current.content },
        context,
      ),
    apply: (self, entry, decision, current, execution, tool) => {
      if (decision.decision === 'withhold') {
        const error = new ToolHookRefusedError({
          hook: entry.name,
          stage: 'after',
          toolName: execution.toolName,
          planId: execution.ctx.planId,
          reason: decision.reason as string,
        });
        const failure: { -readonly [K in keyof ToolFailure]: ToolFailure[K] } = { ok: false, error };
        if (current.changes !== undefined) failure.changes = current.changes;
        return failure;
      }
      if (decision.decision !== 'replace' && decision.decision !== 'redact') return current;
      const check = tool.output?.validate(decision.output);
      if (check !== undefined && !check.valid) {
        const cause = new ToolSchemaValidationError({
          direction: 'output',
          issues: check.issues,
          toolName: execution.toolName,
          planId: execution.ctx.planId,
        });
        throw self.failure(execution, entry, 'after', 'invalid-output', { cause });
      }
      // A replacement replaces every representation the caller gets: without content of its own, the old blocks (which still say what was replaced) go, and the caller renders the new output.
      const { content: _replaced, ...rest } = current as ToolResult & { content?: unknown };
      return (
        decision.content === undefined ? { ...rest, output: decision.output } : { ...rest, output: decision.output, content: decision.content }
      ) as ToolResult;
    },
    // A withheld output ends the step: the hooks after it have nothing to look at.
    stop: (current) => !current.ok,
  };

  /**
   * On a failure of the call (a failed result or a thrown error, but not a
   * cancellation nor a hook's own failure): the error hooks may add notes.
   * Returns nothing, or a pending step.
   * @throws ToolHookError.
   */
  onError(execution: Execution, tool: RegisteredTool, input: unknown, error: unknown, output?: unknown): HookPending<unknown> | undefined {
    if (ToolCancelledError.isInstance(error) || ToolHookError.isInstance(error) || ToolHookRefusedError.isInstance(error) || !(error instanceof Error))
      return undefined;
    const hooks = this.appliedTo(tool).error;
    if (hooks.length === 0) return undefined;
    const call = output === undefined ? { input, error } : { input, error, output };
    const done = this.run(hooks, 0, execution, tool, 'error', undefined, call, ToolHooks.errorStep);
    return done instanceof HookPending ? done : undefined;
  }

  /**
   * What a thrown failure of the execution becomes once the error hooks have
   * seen it: the same error, or the hook's own failure.
   */
  async afterThrow(execution: Execution, tool: RegisteredTool | undefined, input: unknown, thrown: unknown): Promise<unknown> {
    if (tool === undefined) return thrown;
    const error = codedError(execution, thrown);
    try {
      await this.onError(execution, tool, input, error)?.promise;
    } catch (error) {
      return error;
    }
    return error;
  }

  /**
   * Runs `hooks[index…]` in turn on `state`: synchronously while each hook
   * answers at once, then on a promise from the first hook that returns one.
   */
  private run<S>(
    hooks: readonly CompiledHook[],
    index: number,
    execution: Execution,
    tool: RegisteredTool,
    stage: ToolHookStage,
    state: S,
    input: unknown,
    step: Step<S>,
  ): S | HookPending<S> {
    let current = state;
    for (let at = index; at < hooks.length; at++) {
      if (step.stop?.(current) === true) return current;
      const entry = hooks[at] as CompiledHook;
      const context = new HookCallContext(execution, tool.descriptor, stage);
      const started = this.monotonic();
      let answer: unknown;
      try {
        answer = step.call(entry, current, context, input);
      } catch (error) {
        throw this.failure(execution, entry, stage, 'threw', { cause: error, started });
      }
      if (isThenable(answer)) {
        const next = at + 1;
        return new HookPending(
          this.settle(answer, entry, execution, stage, context, started).then((settled) => {
            const updated = this.decide(entry, settled, execution, tool, stage, started, current, step);
            const rest = this.run(hooks, next, execution, tool, stage, updated, input, step);
            return rest instanceof HookPending ? rest.promise : rest;
          }),
        );
      }
      current = this.decide(entry, answer, execution, tool, stage, started, current, step);
    }
    return current;
  }

  /** Checks an answer, records it (trace and note) and applies it. */
  private decide<S>(
    entry: CompiledHook,
    answer: unknown,
    execution: Execution,
    tool: RegisteredTool,
    stage: ToolHookStage,
    started: number,
    state: S,
    step: Step<S>,
  ): S {
    if (answer === undefined) {
      // The common answer, recorded without the checks a decision needs.
      const extra = (execution.extra ??= {});
      (extra.hooks ??= []).push(Object.freeze({ hook: entry.name, stage, decision: 'continue' as const, durationMs: this.monotonic() - started }));
      return state;
    }
    const decision = checkDecision(answer, stage);
    if (typeof decision === 'string') throw this.failure(execution, entry, stage, 'invalid-decision', { detail: decision, started });
    const outcome = decision.decision as ToolHookOutcome;
    const note = decision.note as string | undefined;
    const durationMs = this.monotonic() - started;
    const record: { -readonly [K in keyof ToolExecutionTraceHook]: ToolExecutionTraceHook[K] } = { hook: entry.name, stage, decision: outcome, durationMs };
    if (note !== undefined) record.noted = true;
    if (outcome === 'redact') record.redactions = Object.freeze({ ...(decision.redactions as Record<string, number>) });
    if (outcome === 'refuse' || outcome === 'withhold') record.reason = decision.reason as string;
    const extra = extraOf(execution);
    // A refusal is recorded before it is thrown; any other decision once it is applied (a rewrite the schema refuses is recorded as failed).
    if (outcome === 'refuse') (extra.hooks ??= []).push(Object.freeze(record));
    const next = step.apply(this, entry, decision, state, execution, tool);
    (extra.hooks ??= []).push(Object.freeze(record));
    if (note !== undefined) {
      (extra.notes ??= []).push(
        Object.freeze({ hook: entry.name, stage, text: note.length > MAX_HOOK_NOTE_LENGTH ? note.slice(0, MAX_HOOK_NOTE_LENGTH) : note }),
      );
    }
    return next;
  }

  /** A hook's promise, raced against its deadline and the plan's cancellation. */
  private settle(
    answer: PromiseLike<unknown>,
    entry: CompiledHook,
    execution: Execution,
    stage: ToolHookStage,
    context: HookCallContext,
    started: number,
  ): Promise<unknown> {
    const { toolName, ctx } = execution;
    const planId = ctx.planId;
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        unsubscribe();
        return true;
      };
      const timer = setTimeout(() => {
        if (!finish()) return;
        const error = this.failure(execution, entry, stage, 'timed-out', { started });
        context.abort(error);
        reject(error);
      }, entry.timeoutMs);
      const unsubscribe = ctx.cancellationToken.onCancel((reason) => {
        if (!finish()) return;
        const error = new ToolCancelledError({ reason, toolName, planId });
        context.abort(error);
        reject(error);
      });
      Promise.resolve(answer).then(
        (value) => {
          if (finish()) resolve(value);
        },
        (error: unknown) => {
          if (finish()) reject(this.failure(execution, entry, stage, 'threw', { cause: error, started }));
        },
      );
    });
  }

  /** A hook's failure: recorded in the trace, as the error the execution fails with. */
  private failure(
    execution: Execution,
    entry: CompiledHook,
    stage: ToolHookStage,
    failure: ToolHookFailure,
    details: { readonly cause?: unknown; readonly detail?: string; readonly started?: number },
  ): ToolHookError {
    const error = new ToolHookError({
      hook: entry.name,
      stage,
      failure,
      toolName: execution.toolName,
      planId: execution.ctx.planId,
      ...(details.cause === undefined ? {} : { cause: details.cause }),
      ...(details.detail === undefined ? {} : { detail: details.detail }),
      ...(failure === 'timed-out' ? { timeoutMs: entry.timeoutMs } : {}),
    });
    const durationMs = details.started === undefined ? 0 : this.monotonic() - details.started;
    (extraOf(execution).hooks ??= []).push(Object.freeze({ hook: entry.name, stage, decision: 'failed', durationMs, reason: error.message }));
    return error;
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/** The decision, checked against what the stage allows; a string says what is wrong with it. */
function checkDecision(answer: unknown, stage: ToolHookStage): Decision | string {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return `${describeValue(answer)}, not a decision object`;
  const decision = answer as Decision;
  if (!ALLOWED[stage].includes(decision.decision)) {
    return `decision ${describeValue(decision.decision)}, which a hook ${stage === 'error' ? 'on a failure' : stage + ' a call'} cannot make (it may: ${ALLOWED[stage].join(', ')})`;
  }
  if (decision.note !== undefined && typeof decision.note !== 'string') return `a note that is ${describeValue(decision.note)}, not a string`;
  switch (decision.decision) {
    case 'rewrite':
      if (!('input' in decision)) return "'rewrite' without the input to call with";
      break;
    case 'refuse':
    case 'withhold':
      if (typeof decision.reason !== 'string') return `'${decision.decision}' with a reason that is ${describeValue(decision.reason)}, not a string`;
      break;
    case 'replace':
    case 'redact':
      if (!('output' in decision)) return `'${decision.decision}' without the output to give`;
      if (decision.content !== undefined && !isContent(decision.content)) return `'${decision.decision}' with content that is not a list of { type, … } blocks`;
      if (decision.decision === 'redact' && !isRedactions(decision.redactions)) return "'redact' without redactions counted by rule ({ rule: count ≥ 1 })";
      break;
  }
  return decision;
}

function isContent(value: unknown): boolean {
  return Array.isArray(value) && value.every((block) => typeof block === 'object' && block !== null && typeof (block as { type?: unknown }).type === 'string');
}

function isRedactions(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= 100 && entries.every(([rule, count]) => rule.length > 0 && rule.length <= 200 && Number.isSafeInteger(count) && (count as number) >= 1)
  );
}
