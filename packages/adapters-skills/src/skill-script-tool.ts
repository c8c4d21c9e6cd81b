import { normalizeCapability, type JsonSchema } from '@ca/domain';
import { ToolCancelledError, type ToolExecutionContext } from '@ca/tool-context';
import {
  PROCESS_GROUPS_SUPPORTED,
  signalProcessGroup,
  toolFailure,
  toolSuccess,
  type ToolDescriptor,
  type ToolInstance,
  type ToolResult,
} from '@ca/tool-lifecycle';
import { spawn } from 'node:child_process';
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

/** A script may do anything its interpreter can: it writes, and what it changes is not recorded for undo. */
const SCRIPT_CAPABILITY = normalizeCapability({ writes: true, checkpointable: false });

/** How long a process group has to exit after SIGTERM before it gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/**
 * @internal The tool `skill.<name>.script.<stem>`: runs one bundled script
 * without a shell, in the skill folder, with a deadline and the plan's
 * signal; on cancellation or timeout its whole process group is killed.
 */
export class SkillScriptTool implements ToolInstance<SkillScriptInput, SkillScriptOutput> {
  readonly descriptor: ToolDescriptor;

  constructor(
    readonly skill: DiscoveredSkill,
    readonly script: DiscoveredSkillScript,
    private readonly settings: ResolvedSkillsSettings,
  ) {
    const runner = script.commandArgs.length > 0 ? `${basename(script.command)} ${script.file}` : script.file;
    this.descriptor = Object.freeze({
      name: script.toolName,
      description: `Runs the script ${script.file} bundled with the '${skill.name}' skill (${runner} [args]) in the skill folder and returns its exit code, stdout and stderr. Read the skill's instructions (${skill.toolName}) first.`,
      source: 'skill',
      capability: SCRIPT_CAPABILITY,
      inputSchema: INPUT_SCHEMA,
      annotations: Object.freeze({ title: `${skill.name}: ${script.file}`, skill: skill.name, script: script.file, timeoutMs: settings.scriptTimeoutMs }),
    });
  }

  /**
   * Runs the script. A non-zero exit, a failure to start and a timeout are
   * failed results carrying a {@link SkillError} (with the output so far).
   * @throws ToolCancelledError when the plan is cancelled (the process group is killed first).
   */
  async execute(input: SkillScriptInput | undefined, ctx: ToolExecutionContext): Promise<ToolResult<SkillScriptOutput>> {
    const toolName = this.descriptor.name;
    const planId = ctx.planId;
    const signal = ctx.cancellationToken.signal;
    ctx.cancellationToken.check({ toolName, planId });
    const limit = this.settings.maxScriptOutputBytes;
    const timeoutMs = this.settings.scriptTimeoutMs;
    const args = [...this.script.commandArgs, ...(input?.args ?? [])];
    const details = { toolName, planId, skillPath: this.skill.path };

    return new Promise((resolve, reject) => {
      const child = spawn(this.script.command, args, {
        cwd: this.skill.path,
        env: { ...(this.settings.scriptEnv ?? process.env) },
        detached: PROCESS_GROUPS_SUPPORTED,
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
      const stdout = new CappedBuffer(limit);
      const stderr = new CappedBuffer(limit);
      let timedOut = false;
      let killTimer: NodeJS.Timeout | undefined;
      let settled = false;

      const killGroup = (): void => {
        // Also after the script itself exited: its children may still hold the output pipes.
        if (settled) return;
        signalProcessGroup(child, 'SIGTERM');
        killTimer ??= setTimeout(() => signalProcessGroup(child, 'SIGKILL'), KILL_GRACE_MS);
      };
      const onAbort = (): void => killGroup();
      const deadline = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });

      const finish = (result: ToolResult<SkillScriptOutput> | Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (killTimer !== undefined) clearTimeout(killTimer);
        signal.removeEventListener('abort', onAbort);
        if (result instanceof Error) reject(result);
        else resolve(result);
      };

      child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
      child.stdin.on('error', () => undefined); // a script that does not read its input closes the pipe early
      child.stdin.end(input?.stdin ?? '');

      child.on('error', (error) => {
        finish(
          toolFailure(
            new SkillError({
              ...details,
              code: 'SKILL_SCRIPT_FAILED',
              cause: error,
              message: `Tool '${toolName}' in plan '${planId}' could not start '${this.script.command}' (${error.message}). Install the interpreter or make the script executable.`,
            }),
          ),
        );
      });
      // The script has exited: whatever it left running in its group must not
      // outlive the call (nor hold the output pipes open, which delays 'close').
      child.once('exit', () => signalProcessGroup(child, 'SIGKILL'));
      child.on('close', (exitCode, exitSignal) => {
        const output: SkillScriptOutput = {
          exitCode,
          signal: exitSignal,
          stdout: stdout.text(),
          stderr: stderr.text(),
          stdoutTruncated: stdout.truncated,
          stderrTruncated: stderr.truncated,
        };
        if (signal.aborted) {
          finish(new ToolCancelledError({ reason: ctx.cancellationToken.reason ?? 'cancelled', toolName, planId }));
        } else if (timedOut) {
          finish(
            toolFailure(
              new SkillError({
                ...details,
                code: 'SKILL_SCRIPT_TIMEOUT',
                message: `Tool '${toolName}' in plan '${planId}' ran longer than ${timeoutMs} ms and its process group was killed. Raise scriptTimeoutMs if the script needs longer.`,
              }),
              { output },
            ),
          );
        } else if (exitCode !== 0) {
          finish(
            toolFailure(
              new SkillError({
                ...details,
                code: 'SKILL_SCRIPT_FAILED',
                message: `Tool '${toolName}' in plan '${planId}' exited with ${exitCode === null ? `signal ${exitSignal}` : `status ${exitCode}`}: ${lastLine(output.stderr) || 'no error output'}. See the output for details.`,
              }),
              { output },
            ),
          );
        } else {
          finish(toolSuccess(output));
        }
      });
    });
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}

/** Keeps the first `limit` bytes of a stream and drops the rest. */
class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks, this.size).toString('utf8');
  }
}
