import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { ApprovalRecord, ApprovalStore } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import { checkPlanId } from './plan-registry';
import { checkStateFolder } from './state-folder';

/** Largest approvals file read: far more records than a plan makes. */
const MAX_APPROVALS_BYTES = 1024 * 1024;
/** Bytes of a key the command makes. */
const KEY_BYTES = 32;

/**
 * The `tool` and `call` approvals of plans, kept under the state directory
 * (`approvals/<plan-id>.jsonl`, one signed record a line, the folder for the
 * owner only), so that a plan run again with the same id does not ask again
 * for what was approved. The runtime checks every record's signature when it
 * reads them: a line that was edited is refused.
 */
export class FileApprovalStore implements ApprovalStore {
  private readonly folder: string;

  constructor(stateDir: string) {
    this.folder = path.join(stateDir, 'approvals');
  }

  async load(planId: string): Promise<readonly unknown[]> {
    const file = this.fileOf(planId);
    if (!checkStateFolder(this.folder, 'kept approvals', { create: false })) return [];
    let text: string;
    try {
      const stat = fs.statSync(file);
      if (!stat.isFile()) throw new Error(`${file} is not a file`);
      if (stat.size > MAX_APPROVALS_BYTES) throw new Error(`${file} is ${stat.size} bytes, more than the ${MAX_APPROVALS_BYTES} an approvals file may have`);
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
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
    checkStateFolder(this.folder, 'kept approvals', { create: true });
    fs.appendFileSync(this.fileOf(record.planId), `${JSON.stringify(record)}\n`, { mode: 0o600 });
  }

  async forget(planId: string): Promise<void> {
    fs.rmSync(this.fileOf(planId), { force: true });
  }

  private fileOf(planId: string): string {
    checkPlanId(planId);
    return path.join(this.folder, `${planId}.jsonl`);
  }
}

/**
 * The key approval records are signed with: `$AGENTS_APPROVAL_KEY` when set
 * (at least 32 bytes), else `approval.key` in the state directory, made with
 * 32 random bytes on first use (owner-only). Anyone who can read it can
 * forge approvals for this user's plans: keep the state directory private,
 * or give the key from a secret store through the variable.
 * @throws CliError when the variable is set but too short.
 */
export function approvalKey(stateDir: string, env: Readonly<Record<string, string | undefined>>): string {
  const given = env['AGENTS_APPROVAL_KEY'];
  if (given !== undefined && given !== '') {
    if (Buffer.byteLength(given, 'utf8') < KEY_BYTES) {
      throw new CliError({
        code: 'CLI_USAGE',
        message: `AGENTS_APPROVAL_KEY has ${Buffer.byteLength(given, 'utf8')} bytes; it must have at least ${KEY_BYTES}. Generate one with: openssl rand -base64 32`,
      });
    }
    return given;
  }
  const file = path.join(stateDir, 'approval.key');
  // Whoever can read or replace the key can forge approvals: the folder and the file must be this user's alone.
  checkStateFolder(stateDir, 'the approval key', { create: true });
  try {
    fs.writeFileSync(file, randomBytes(KEY_BYTES).toString('base64'), { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = fs.lstatSync(file);
  const uid = process.getuid?.();
  const problem = !stat.isFile()
    ? 'it is not a regular file'
    : uid !== undefined && stat.uid !== uid
      ? `it belongs to another user (uid ${stat.uid})`
      : process.platform !== 'win32' && (stat.mode & 0o077) !== 0
        ? `others may read or change it (mode ${(stat.mode & 0o777).toString(8)}); run chmod 600 on it`
        : undefined;
  if (problem !== undefined) {
    throw new CliError({
      code: 'CLI_STATE_UNSAFE',
      message: `The approval key ${file} cannot be used: ${problem}. Whoever can read it can forge approvals. Delete it to have a new one made (approvals kept so far are then asked again), or give the key in AGENTS_APPROVAL_KEY.`,
    });
  }
  const key = fs.readFileSync(file, 'utf8').trim();
  if (Buffer.byteLength(key, 'utf8') < KEY_BYTES) {
    throw new CliError({
      code: 'CLI_USAGE',
      message: `${file} holds a key of ${Buffer.byteLength(key, 'utf8')} bytes; it must have at least ${KEY_BYTES}. Delete the file to have a new one made (approvals kept so far are then asked again).`,
    });
  }
  return key;
}
