import { createHash } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, unlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { ToolInvalidArgumentError } from '../errors';
import type { ApprovalRecord, ApprovalStore } from './approval-store';

/** Options of {@link FileApprovalStore}. */
export interface FileApprovalStoreOptions {
  /**
   * The folder of the records, one file per plan (`<plan id>.jsonl`); made,
   * owner-only (0700), when missing. An absolute path. It must be the
   * service's alone: whoever can write it can remove approvals, and — with the
   * approval key — add some.
   */
  readonly folder: string;
  /** Largest file read, in bytes (default 1 MiB: far more records than a plan makes). */
  readonly maxFileBytes?: number;
}

const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** A plan id used as it is for its file's name; any other is named by its hash. */
const PLAIN_PLAN_ID = /^[A-Za-z0-9_.-]{1,128}$/;
/** Group- and world-writable bits. */
const WRITABLE_BY_OTHERS = 0o022;

/**
 * An {@link ApprovalStore} in files, so that a plan restarted with the same id
 * — in a new process, after a restart — does not ask again for what was
 * approved: one file per plan in `folder`, one signed record a line, appended
 * (`O_APPEND`, so the records of concurrent processes do not interleave
 * within a line). The runtime checks every record's signature when it reads
 * them, so a line edited by hand is refused; give every runtime that shares the
 * folder the same `approvalKey`.
 *
 * Before each read and write the folder is checked — a real folder, not a
 * link; on POSIX the service user's own and writable by nobody else — and
 * files are opened without following links, with mode 0600. A failure is
 * thrown to the runtime, which logs it and asks again rather than trust what
 * it could not read. A plan id of letters, digits, `_`, `.` and `-` (up to 128
 * characters, not `.` or `..`) names its file as it is; any other is named by its SHA-256.
 */
export class FileApprovalStore implements ApprovalStore {
  /** The folder of the records. */
  readonly folder: string;
  readonly #maxFileBytes: number;

  /**
   * @throws ToolInvalidArgumentError when `folder` is not an absolute path or `maxFileBytes` is not a whole number ≥ 1.
   */
  constructor(options: FileApprovalStoreOptions) {
    const folder = (options as Partial<FileApprovalStoreOptions> | undefined)?.folder;
    if (typeof folder !== 'string' || !isAbsolute(folder)) {
      throw new ToolInvalidArgumentError({ argument: 'FileApprovalStore folder', expected: 'an absolute path', received: folder });
    }
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1) {
      throw new ToolInvalidArgumentError({ argument: 'FileApprovalStore maxFileBytes', expected: 'a whole number of bytes ≥ 1', received: maxFileBytes });
    }
    this.folder = folder;
    this.#maxFileBytes = maxFileBytes;
  }

  async load(planId: string): Promise<readonly unknown[]> {
    const file = this.fileOf(planId);
    if (!(await this.#checkFolder(false))) return [];
    let handle;
    try {
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    let text: string;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new Error(`${file} is not a regular file`);
      if (stat.size > this.#maxFileBytes) throw new Error(`${file} is ${stat.size} bytes, more than the ${this.#maxFileBytes} an approvals file may have`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
    return text
      .split('\n')
      .filter((line) => line.trim().length > 0)
      .map((line) => {
        try {
          return JSON.parse(line) as unknown;
        } catch {
          // The runtime refuses it, saying so.
          return line;
        }
      });
  }

  async save(record: ApprovalRecord): Promise<void> {
    const file = this.fileOf(record.planId);
    await this.#checkFolder(true);
    const handle = await open(file, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
    try {
      if (!(await handle.stat()).isFile()) throw new Error(`${file} is not a regular file`);
      await handle.write(`${JSON.stringify(record)}\n`);
    } finally {
      await handle.close();
    }
  }

  async forget(planId: string): Promise<void> {
    const file = this.fileOf(planId);
    if (!(await this.#checkFolder(false))) return;
    await unlink(file).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }

  /** The file of a plan's records. */
  fileOf(planId: string): string {
    if (typeof planId !== 'string' || planId.length === 0) {
      throw new ToolInvalidArgumentError({ argument: 'planId', expected: 'a non-empty string', received: planId });
    }
    const name = PLAIN_PLAN_ID.test(planId) && !/^\.+$/.test(planId) ? planId : `plan-${createHash('sha256').update(planId).digest('hex')}`;
    return join(this.folder, `${name}.jsonl`);
  }

  /** Checks the folder (making it when `create`); false when it does not exist and was not to be made. */
  async #checkFolder(create: boolean): Promise<boolean> {
    let stat: Stats;
    try {
      stat = await lstat(this.folder);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (!create) return false;
      await mkdir(this.folder, { recursive: true, mode: 0o700 });
      stat = await lstat(this.folder);
    }
    const problem = folderProblem(stat);
    if (problem !== undefined) throw new Error(`The approvals folder ${this.folder} cannot be used: ${problem}`);
    return true;
  }
}

/** Why a folder cannot hold approvals, or `undefined`. */
function folderProblem(stat: Stats): string | undefined {
  if (stat.isSymbolicLink()) return 'it is a symbolic link; give the real folder';
  if (!stat.isDirectory()) return 'it is not a folder';
  // Windows has no owners and modes to check here.
  if (process.platform === 'win32') return undefined;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `it belongs to another user (uid ${stat.uid}); use a folder of the service's own`;
  if ((stat.mode & WRITABLE_BY_OTHERS) !== 0) return `others may write to it (mode ${(stat.mode & 0o7777).toString(8)}); run chmod 700 on it`;
  return undefined;
}
