import { redactSecrets } from '@ca/domain';
import { createSandbox, runProcess, sandboxOptionsForPlan, type SandboxSetting } from '@ca/sandbox';
import type { ToolAfterDecision, ToolBeforeDecision, ToolErrorDecision, ToolHook, ToolHookContext } from '@ca/tool-lifecycle';

/** A command hook as the configuration writes it (`hooks` of `agents.config.json`). */
export interface CommandHookEntry {
  readonly name: string;
  /** When it runs: `before` a call, `after` a successful one, or on a failed one (`error`). */
  readonly on: 'before' | 'after' | 'error';
  /** Tool-name globs; default every tool. */
  readonly tools?: string | readonly string[];
  readonly command: string;
  readonly args?: readonly string[];
  /** Variables set for it (its environment is otherwise the process runner's minimal one). */
  readonly env?: Readonly<Record<string, string>>;
  /** How long it may run, in ms (default 10,000). */
  readonly timeoutMs?: number;
}

/** The names Claude Code gives the three moments, which command hooks read as `hook_event_name`. */
const EVENT_NAMES = { before: 'PreToolUse', after: 'PostToolUse', error: 'PostToolUseFailure' } as const;
const DEFAULT_TIMEOUT_MS = 10_000;
/** Most bytes of a hook's answer read. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/**
 * A hook that runs a program, as Claude Code's command hooks do: the call as
 * JSON on its stdin (`hook_event_name`, `tool_name`, `tool_input`,
 * `tool_use_id` — the execution id —, `session_id` — the plan id —, `cwd`,
 * and `tool_response` after a call or `error` on a failure), its answer on
 * stdout, its exit code. It runs through the process runner (no shell, a
 * minimal environment, its own process group), in the kernel sandbox where
 * the configuration's `sandbox` allows (read-only: a hook reads the call, it
 * does not change the plan's files; network as the plan's policy says), with
 * a deadline. What the answer means is in the CLI's README ("Command hooks").
 */
export function createCommandHook(entry: CommandHookEntry, settings: { readonly cwd: string; readonly sandbox?: SandboxSetting }): ToolHook {
  const timeoutMs = entry.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sandbox = createSandbox(settings.sandbox ?? 'auto', { setting: `hooks.${entry.name}` });
  const run = async (stage: 'before' | 'after' | 'error', payload: Record<string, unknown>, context: ToolHookContext) => {
    const launcher = await sandbox.launcher({
      ...sandboxOptionsForPlan({ policy: { ...context.policy, readOnly: true }, resources: context.resources }),
      toolName: context.toolName,
      planId: context.planId,
    });
    const input = JSON.stringify({
      session_id: context.planId,
      cwd: settings.cwd,
      hook_event_name: EVENT_NAMES[stage],
      tool_name: context.toolName,
      tool_use_id: context.executionId,
      ...payload,
    });
    const result = await runProcess({
      command: entry.command,
      args: [...(entry.args ?? [])],
      cwd: settings.cwd,
      ...(entry.env === undefined ? {} : { env: entry.env }),
      stdin: input,
      timeoutMs,
      signal: context.signal,
      maxStdoutBytes: MAX_ANSWER_BYTES,
      maxStderrBytes: 64 * 1024,
      toolName: context.toolName,
      planId: context.planId,
      ...(launcher === undefined ? {} : { launcher }),
    });
    if (result.timedOut) throw new Error(`the command '${entry.command}' did not finish within ${timeoutMs} ms`);
    if (result.cancelled) throw new Error(`the command '${entry.command}' was stopped: the plan was cancelled`);
    const stderr = result.stderr.text.trim();
    // Exit 2 is Claude Code's "block": stderr is the reason.
    if (result.exitCode === 2) return { blocked: stderr === '' ? `hook '${entry.name}' blocked the call` : stderr, answer: undefined };
    if (result.exitCode !== 0) {
      throw new Error(`the command '${entry.command}' exited with ${result.exitCode ?? result.signal}${stderr === '' ? '' : `: ${stderr.slice(0, 2_000)}`}`);
    }
    if (result.stdout.truncated) throw new Error(`the command '${entry.command}' answered more than ${MAX_ANSWER_BYTES} bytes`);
    const text = result.stdout.text.trim();
    if (text === '') return { blocked: undefined, answer: {} as Record<string, unknown> };
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new Error(`the command '${entry.command}' answered something that is not JSON (${JSON.stringify(text.slice(0, 200))})`);
    }
    if (typeof answer !== 'object' || answer === null || Array.isArray(answer))
      throw new Error(`the command '${entry.command}' answered JSON that is not an object`);
    checkAnswer(answer as Record<string, unknown>, stage);
    return { blocked: undefined, answer: answer as Record<string, unknown> };
  };
  /**
   * An answer whose fields do not say what Claude Code's contract lets them
   * say fails closed: a hook that meant to refuse in words the runtime does
   * not know (`"decision": "deny"`) must not let the call through.
   */
  const checkAnswer = (answer: Record<string, unknown>, stage: 'before' | 'after' | 'error'): void => {
    const wrong = (field: string, value: unknown, allowed: string): never => {
      const shown = JSON.stringify(value) ?? String(value);
      throw new Error(
        `the command '${entry.command}' answered ${field} ${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown}, which a ${EVENT_NAMES[stage]} hook cannot answer (it may: ${allowed}); the call was not let through on an answer the runtime cannot read`,
      );
    };
    const decisions = stage === 'before' ? ['approve', 'block'] : ['block'];
    if (answer['decision'] !== undefined && !decisions.includes(answer['decision'] as string)) {
      wrong('"decision"', answer['decision'], `${decisions.map((decision) => `"${decision}"`).join(', ')}, or no decision`);
    }
    if (answer['continue'] !== undefined && typeof answer['continue'] !== 'boolean') wrong('"continue"', answer['continue'], 'true or false');
    for (const field of ['reason', 'stopReason'] as const) {
      if (answer[field] !== undefined && typeof answer[field] !== 'string') wrong(`"${field}"`, answer[field], 'a string');
    }
    const own = answer['hookSpecificOutput'];
    if (own === undefined) return;
    if (typeof own !== 'object' || own === null || Array.isArray(own)) wrong('"hookSpecificOutput"', own, 'an object');
    const fields = own as Record<string, unknown>;
    if (fields['additionalContext'] !== undefined && typeof fields['additionalContext'] !== 'string') {
      wrong('"hookSpecificOutput.additionalContext"', fields['additionalContext'], 'a string');
    }
    if (stage !== 'before') {
      if (fields['permissionDecision'] !== undefined)
        wrong('"hookSpecificOutput.permissionDecision"', fields['permissionDecision'], 'none: it is for PreToolUse hooks');
      return;
    }
    const permission = fields['permissionDecision'];
    if (permission !== undefined && permission !== 'allow' && permission !== 'deny' && permission !== 'ask') {
      wrong('"hookSpecificOutput.permissionDecision"', permission, '"allow", "deny", "ask", or none');
    }
    if (fields['permissionDecisionReason'] !== undefined && typeof fields['permissionDecisionReason'] !== 'string') {
      wrong('"hookSpecificOutput.permissionDecisionReason"', fields['permissionDecisionReason'], 'a string');
    }
  };
  const specific = (answer: Record<string, unknown>): Record<string, unknown> =>
    typeof answer['hookSpecificOutput'] === 'object' && answer['hookSpecificOutput'] !== null ? (answer['hookSpecificOutput'] as Record<string, unknown>) : {};
  const noteOf = (answer: Record<string, unknown>): { note?: string } => {
    const context = specific(answer)['additionalContext'];
    return typeof context === 'string' && context !== '' ? { note: context } : {};
  };
  const stopped = (answer: Record<string, unknown>): string | undefined =>
    answer['continue'] === false ? (typeof answer['stopReason'] === 'string' ? answer['stopReason'] : `hook '${entry.name}' stopped the call`) : undefined;
  const base = { name: entry.name, timeoutMs: timeoutMs + 5_000, ...(entry.tools === undefined ? {} : { tools: entry.tools }) };
  switch (entry.on) {
    case 'before':
      return {
        ...base,
        async before(input, context): Promise<ToolBeforeDecision> {
          const outcome = await run('before', { tool_input: input }, context);
          if (outcome.blocked !== undefined) return { decision: 'refuse', reason: outcome.blocked };
          const answer = outcome.answer as Record<string, unknown>;
          const own = specific(answer);
          const stop = stopped(answer);
          if (stop !== undefined) return { decision: 'refuse', reason: stop };
          const reasonOf = (key: string) =>
            typeof answer[key] === 'string' ? (answer[key] as string) : typeof own[key] === 'string' ? (own[key] as string) : '';
          if (own['permissionDecision'] === 'deny' || answer['decision'] === 'block') {
            return {
              decision: 'refuse',
              reason: reasonOf(own['permissionDecision'] === 'deny' ? 'permissionDecisionReason' : 'reason') || `hook '${entry.name}' denied the call`,
            };
          }
          if (own['permissionDecision'] === 'ask') {
            throw new Error(
              "the command answered permissionDecision 'ask', which the runtime does not take from a hook: deny, allow, or leave the call to the approval rules",
            );
          }
          if ('updatedInput' in own) return { decision: 'rewrite', input: own['updatedInput'], ...noteOf(answer) };
          return { decision: 'continue', ...noteOf(answer) };
        },
      };
    case 'after':
      return {
        ...base,
        async after(call, context): Promise<ToolAfterDecision> {
          const outcome = await run('after', { tool_input: call.input, tool_response: call.output }, context);
          if (outcome.blocked !== undefined) return { decision: 'withhold', reason: outcome.blocked };
          const answer = outcome.answer as Record<string, unknown>;
          const own = specific(answer);
          const stop = stopped(answer);
          if (stop !== undefined || answer['decision'] === 'block') {
            return {
              decision: 'withhold',
              reason: stop ?? (typeof answer['reason'] === 'string' ? answer['reason'] : `hook '${entry.name}' blocked the output`),
            };
          }
          const replaced = 'updatedMCPToolOutput' in own ? own['updatedMCPToolOutput'] : 'updatedToolOutput' in own ? own['updatedToolOutput'] : undefined;
          if (replaced !== undefined) return { decision: 'replace', output: replaced, ...noteOf(answer) };
          return { decision: 'continue', ...noteOf(answer) };
        },
      };
    default:
      return {
        ...base,
        async onError(call, context): Promise<ToolErrorDecision> {
          // Another program: the message goes with its secrets taken out, as a trace holds it.
          const error = { code: call.error.code ?? 'UNKNOWN', message: redactSecrets(call.error.message) };
          const outcome = await run('error', { tool_input: call.input, error }, context);
          if (outcome.blocked !== undefined) return { decision: 'continue', note: outcome.blocked };
          return { decision: 'continue', ...noteOf(outcome.answer as Record<string, unknown>) };
        },
      };
  }
}
