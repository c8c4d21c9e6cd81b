import { normalizeCapability, type JsonSchema } from '@ca/domain';
import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import { toolFailure, toolSuccess, type ToolDescriptor, type ToolInstance, type ToolResult } from '@ca/tool-lifecycle';
import { ProcessLaunchError, ProcessOptionsError, ProcessStartError, runProcess, type ProcessResult, sandboxOptionsForPlan } from '@ca/sandbox';
import { basename } from 'node:path';
import type { DiscoveredSkill, DiscoveredSkillScript } from './discover-skills';
import { SkillError } from './skill-error';
import type { ResolvedSkillsSettings } from './skills-adapter-settings';

/** Input of a `skill.<name>.script.<stem>` tool. */
export interface SkillScriptInput {
  /** Arguments passed to the script as they are (no shell: nothing is expanded or split). */
  readonly args?: readonly string[];
  /** Written to the script's standard input, which is then closed. */
  readonly stdin?: string;
}

/** Output of a `skill.<name>.script.<stem>` tool (also attached to a failed result). */
export interface SkillScriptOutput {
  /** Exit status, or `null` when the process was ended by a signal. */
  readonly exitCode: number | null;
  /** The signal that ended the process, if any. */
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** `true` when stdout was longer than `maxScriptOutputBytes` and was cut. */
  readonly stdoutTruncated: boolean;
  /** `true` when stderr was longer than `maxScriptOutputBytes` and was cut. */
  readonly stderrTruncated: boolean;
}

const INPUT_SCHEMA: JsonSchema = Object.freeze({
  type: 'object',
  properties: {
    args: { type: 'array', items: { type: 'string' }, maxItems: 1024, description: 'Arguments for the script, passed without a shell.' },
    stdin: { type: 'string', description: "Text written to the script's standard input." },
  },
  additionalProperties: false,
});

/**
 * A script may do anything its interpreter can: it writes (and may destroy),
 * reaches the network, and what it changes is not recorded for undo. In the
 * kernel sandbox this is what it can do in a plain plan; the plan decides the
 * rest (`capabilityInPlan` of `@ca/tool-lifecycle`): nothing writable in a
 * read-only plan or in one that requires checkpoints (its changes would not be
 * recorded), no network in a plan that denies it.
 */
const SCRIPT_CAPABILITY = normalizeCapability({ writes: true, checkpointable: false });
/** The same, under a sandbox whose settings take the network away (`network: false`). */
const OFFLINE_SCRIPT_CAPABILITY = normalizeCapability({ writes: true, checkpointable: false, openWorld: false });
/** Scripts record no overlay: in a checkpoint plan the sandbox makes everything read-only to them. */
const SCRIPT_SANDBOXING = Object.freeze({ overlay: false });

/** How long a process group has to exit after SIGTERM before it gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/**
 * @internal The tool `skill.<name>.script.<stem>`: runs one bundled script
 * through the process runner — without a shell, in the skill folder, with the
 * minimal environment plus `scriptEnv`, a deadline and the plan's signal; on
 * cancellation or timeout its whole process group is killed.
 */
export class SkillScriptTool implements ToolInstance<SkillScriptInput, SkillScriptOutput> {
  readonly descriptor: ToolDescriptor;

  constructor(
    readonly skill: DiscoveredSkill,
    readonly script: DiscoveredSkillScript,
    private readonly settings: ResolvedSkillsSettings,
    /** Whether the script runs in the kernel sandbox (decided by the source at discovery). */
    readonly sandboxed = false,
  ) {
    const runner = script.commandArgs.length > 0 ? `${basename(script.command)} ${script.file}` : script.file;
    const confinement = sandboxed
      ? ' It runs in a sandbox: it can write only the resources bound with write access (nothing in a read-only plan or one that requires checkpoints); /tmp is private.'
      : '';
    this.descriptor = Object.freeze({
      name: script.toolName,
      description: `Runs the script ${script.file} bundled with the '${skill.name}' skill (${runner} [args]) in the skill folder and returns its exit code, stdout and stderr.${confinement} Read the skill's instructions (${skill.toolName}) first.`,
      source: 'skill',
      capability: sandboxed && !settings.sandbox.settings.network ? OFFLINE_SCRIPT_CAPABILITY : SCRIPT_CAPABILITY,
      ...(sandboxed ? { sandboxed: SCRIPT_SANDBOXING } : {}),
      inputSchema: INPUT_SCHEMA,
      annotations: Object.freeze({ title: `${skill.name}: ${script.file}`, skill: skill.name, script: script.file, timeoutMs: settings.scriptTimeoutMs }),
    });
  }

  /**
   * With `sandbox: 'required'`, fails when the sandbox does not work here.
   * @throws {SandboxUnavailableError} `SANDBOX_UNAVAILABLE`, naming the reason and the install command.
   */
  async activate(): Promise<void> {
    await this.settings.sandbox.ensureAvailable();
  }

  /**
   * Runs the script through the process runner: the minimal environment plus
   * `scriptEnv`, its own process group, capped output. A non-zero exit, a
   * failure to start and a timeout are failed results carrying a
   * {@link SkillError} (with the output so far).
   * @throws ToolCancelledError when the plan is cancelled (the process group is killed first).
   */
  async execute(input: SkillScriptInput | undefined, ctx: ToolExecutionContext): Promise<ToolResult<SkillScriptOutput>> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    ctx.cancellationToken.check({ toolName, planId });
    const limit = this.settings.maxScriptOutputBytes;
    const timeoutMs = this.settings.scriptTimeoutMs;
    const details = { toolName, planId, skillPath: this.skill.path };

    const launcher = this.sandboxed
      ? await this.settings.sandbox.launcher({ ...sandboxOptionsForPlan(ctx), readablePaths: [this.skill.path], toolName, planId })
      : undefined;
    let result: ProcessResult;
    try {
      result = await runProcess({
        command: this.script.command,
        args: [...this.script.commandArgs, ...(input?.args ?? [])],
        cwd: this.skill.path,
        ...(this.settings.scriptEnv === undefined ? {} : { env: this.settings.scriptEnv }),
        stdin: input?.stdin ?? '',
        signal: ctx.cancellationToken.signal,
        timeoutMs,
        killGraceMs: KILL_GRACE_MS,
        maxStdoutBytes: limit,
        maxStderrBytes: limit,
        ...(launcher === undefined ? {} : { launcher }),
        toolName,
        planId,
      });
    } catch (error) {
      if (ProcessOptionsError.isInstance(error)) {
        return toolFailure(
          new SkillError({
            ...details,
            code: 'SKILL_SCRIPT_FAILED',
            cause: error,
            problem: `could not start '${this.script.command}': ${error.option} holds what the system cannot pass to a program (a NUL character)`,
            remedy: 'Remove it from the arguments.',
          }),
        );
      }
      if (ProcessLaunchError.isInstance(error)) {
        return toolFailure(
          new SkillError({
            ...details,
            code: 'SKILL_SCRIPT_FAILED',
            cause: error,
            problem: `could not run '${this.script.command}' in the sandbox: ${(error.cause as { message?: unknown } | undefined)?.message ?? error.message}`,
          }),
        );
      }
      if (!ProcessStartError.isInstance(error)) throw error;
      const reason = (error.cause as { message?: unknown } | undefined)?.message;
      return toolFailure(
        new SkillError({
          ...details,
          code: 'SKILL_SCRIPT_FAILED',
          cause: error,
          problem: `could not start '${this.script.command}' (${typeof reason === 'string' ? reason : error.message})`,
          remedy: 'Install the interpreter or make the script executable; scripts see PATH from the minimal environment unless scriptEnv sets it.',
        }),
      );
    }
    if (result.cancelled) throw new ToolCancelledError({ reason: ctx.cancellationToken.reason ?? 'cancelled', toolName, planId });
    const output: SkillScriptOutput = {
      exitCode: result.exitCode,
      signal: result.signal,
      stdout: result.stdout.text,
      stderr: result.stderr.text,
      stdoutTruncated: result.stdout.truncated,
      stderrTruncated: result.stderr.truncated,
    };
    if (result.timedOut) {
      return toolFailure(
        new SkillError({
          ...details,
          code: 'SKILL_SCRIPT_TIMEOUT',
          problem: `ran longer than ${timeoutMs} ms and its process group was killed`,
          remedy: 'Raise scriptTimeoutMs if the script needs longer.',
        }),
        { output },
      );
    }
    if (result.exitCode !== 0) {
      return toolFailure(
        new SkillError({
          ...details,
          code: 'SKILL_SCRIPT_FAILED',
          problem: `exited with ${result.exitCode === null ? `signal ${result.signal}` : `status ${result.exitCode}`}: ${lastLine(output.stderr) || 'no error output'}`,
          remedy: 'See the output for details.',
        }),
        { output },
      );
    }
    return toolSuccess(output);
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
