import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FileApprovalStore as LibraryFileApprovalStore, type ApprovalRecord } from '@ca/tool-lifecycle';
import { CliError } from './cli-error';
import { checkPlanId } from './plan-registry';
import { checkStateFolder } from './state-folder';

/** Bytes of a key the command makes. */
const KEY_BYTES = 32;

/**
 * The `tool` and `call` approvals of plans, kept under the state directory
 * (`approvals/<plan-id>.jsonl`, one signed record a line, the folder for the
 * owner only), so that a plan run again with the same id does not ask again
 * for what was approved: the `FileApprovalStore` of `@ca/tool-lifecycle`, with
 * the command's own checks first — a plan id the command accepts, and the
 * state folder's (`CLI_STATE_UNSAFE`, saying what to do). The runtime checks
 * every record's signature when it reads them: a line that was edited is refused.
 */
export class FileApprovalStore extends LibraryFileApprovalStore {
  constructor(stateDir: string) {
    super({ folder: path.join(path.resolve(stateDir), 'approvals') });
  }

  override async load(planId: string): Promise<readonly unknown[]> {
    checkPlanId(planId);
    if (!checkStateFolder(this.folder, 'kept approvals', { create: false })) return [];
    return super.load(planId);
  }

  override async save(record: ApprovalRecord): Promise<void> {
    checkPlanId(record.planId);
    checkStateFolder(this.folder, 'kept approvals', { create: true });
    return super.save(record);
  }

  override async forget(planId: string): Promise<void> {
    checkPlanId(planId);
    return super.forget(planId);
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
