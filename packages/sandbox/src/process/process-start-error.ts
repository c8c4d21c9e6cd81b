import { causeMessage, describeCaller, ProcessError } from './process-error';

/** Options of {@link ProcessStartError}. */
export interface ProcessStartErrorOptions {
  /** The program that was asked for (before any launcher rewrote the command line). */
  readonly command: string;
  /** The working folder it was to start in, when one was given. */
  readonly cwd?: string;
  /** The error of the operating system (`spawn x ENOENT`, `EACCES`, …). */
  readonly cause: unknown;
  readonly toolName?: string;
  readonly planId?: string;
}

/**
 * The program could not be started: not found, not executable, a working
 * folder that does not exist, no more processes. The operating system's
 * error is the `cause`; its `code` (`ENOENT`, `EACCES`, …) is copied to
 * `systemCode`.
 *
 * Code: `PROCESS_START_FAILED`.
 */
export class ProcessStartError extends ProcessError {
  declare readonly code: 'PROCESS_START_FAILED';
  /** The program that was asked for. */
  readonly command: string;
  /** The working folder, when one was given. */
  readonly cwd: string | undefined;
  /** The operating system's error code (`ENOENT`, `EACCES`, …), when it has one. */
  readonly systemCode: string | undefined;

  /** @throws Never. */
  constructor(options: ProcessStartErrorOptions) {
    const { command, cwd, cause, toolName, planId } = options;
    const systemCode = systemCodeOf(cause);
    super(
      'PROCESS_START_FAILED',
      `${describeCaller(toolName, planId)}could not start '${command}'${cwd === undefined ? '' : ` in '${cwd}'`}: ${causeMessage(cause)}. ${adviceFor(systemCode)}`,
      { cause, ...(toolName === undefined ? {} : { toolName }), ...(planId === undefined ? {} : { planId }) },
    );
    this.command = command;
    this.cwd = cwd;
    this.systemCode = systemCode;
  }
}

function systemCodeOf(cause: unknown): string | undefined {
  const code = (cause as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function adviceFor(systemCode: string | undefined): string {
  switch (systemCode) {
    case 'ENOENT':
      return 'Check that the program is installed and on the PATH the program gets (it sees only the variables passed to it), or give its absolute path, and that the working folder exists.';
    case 'EACCES':
    case 'EPERM':
      return 'Check that the file is executable and that this user may run it.';
    case 'EAGAIN':
    case 'EMFILE':
    case 'ENFILE':
    case 'ENOMEM':
      return 'The system is out of processes, file descriptors or memory; try again later or raise the limits.';
    default:
      return 'Check the program and its working folder.';
  }
}
