import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './cli-error';

/** Group- and world-writable bits. */
const WRITABLE_BY_OTHERS = 0o022;
const STICKY = 0o1000;

/** What a folder must be for the command to keep state in it, and what to do instead. */
interface Problem {
  readonly why: string;
  readonly advice: string;
}

function currentUid(): number | undefined {
  return process.getuid?.();
}

/**
 * Why `folder` cannot hold the command's state — a symbolic link, not a
 * folder, another user's, writable by others, or in a parent others may
 * rename it out of — or `undefined`. Reads the folder itself (`lstat`), never
 * what a link points to. A folder that does not exist is `'missing'`.
 */
function problemOf(folder: string): Problem | 'missing' | undefined {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(folder);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return { why: `it cannot be read (${(error as Error).message})`, advice: 'Choose another folder with --state-dir or AGENTS_STATE_DIR.' };
  }
  if (stat.isSymbolicLink()) {
    return { why: 'it is a symbolic link', advice: 'Point --state-dir (or AGENTS_STATE_DIR) at a real folder of your own, not at a link.' };
  }
  if (!stat.isDirectory()) return { why: 'it is not a folder', advice: 'Choose a folder with --state-dir or AGENTS_STATE_DIR.' };
  // Windows has no owners and modes to check here; its default state folder is the user's own.
  if (process.platform === 'win32') return undefined;
  const uid = currentUid();
  if (uid !== undefined && stat.uid !== uid) {
    return { why: `it belongs to another user (uid ${stat.uid}, you are ${uid})`, advice: 'Choose a folder of your own with --state-dir or AGENTS_STATE_DIR.' };
  }
  if ((stat.mode & WRITABLE_BY_OTHERS) !== 0) {
    return {
      why: `others may write to it (mode ${(stat.mode & 0o7777).toString(8)})`,
      advice: `Run chmod 700 ${folder}, or choose another folder with --state-dir or AGENTS_STATE_DIR.`,
    };
  }
  const parent = path.dirname(folder);
  if (parent !== folder) {
    let parentStat: fs.Stats | undefined;
    try {
      parentStat = fs.statSync(parent);
    } catch {
      parentStat = undefined;
    }
    // In a folder others may write to, without the sticky bit (as /tmp has), they can rename this one away and put theirs in its place.
    if (parentStat !== undefined && (parentStat.mode & WRITABLE_BY_OTHERS) !== 0 && (parentStat.mode & STICKY) === 0) {
      return {
        why: `others may replace it: its parent ${parent} is writable by others (mode ${(parentStat.mode & 0o7777).toString(8)}) without the sticky bit`,
        advice: 'Choose a folder inside one only you can write, with --state-dir or AGENTS_STATE_DIR.',
      };
    }
  }
  return undefined;
}

function unsafe(folder: string, role: string, problem: Problem): CliError {
  return new CliError({
    code: 'CLI_STATE_UNSAFE',
    message: `The state folder ${folder} cannot be used (${role}): ${problem.why}. Others could read or change running plans, their sockets and the approvals kept there. ${problem.advice}`,
  });
}

/**
 * Checks a folder of the command's state (the state folder, and the folders
 * it makes inside) before anything is read from or written to it: it must
 * be a real folder (not a link), the user's own, writable by nobody else, in
 * a parent nobody else may rename it out of. With `create`, a missing folder
 * is made (mode 0700) first.
 * @param role What the folder holds, for the message (`running plans`).
 * @returns false when the folder does not exist and `create` is false.
 * @throws CliError `CLI_STATE_UNSAFE` saying what is wrong and what to do (chmod 700, another folder).
 */
export function checkStateFolder(folder: string, role: string, options: { readonly create: boolean }): boolean {
  let problem = problemOf(folder);
  if (problem === 'missing') {
    if (!options.create) return false;
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
    problem = problemOf(folder);
  }
  if (problem === 'missing')
    throw unsafe(folder, role, { why: 'it vanished as it was made', advice: 'Try again, or choose another folder with --state-dir or AGENTS_STATE_DIR.' });
  if (problem !== undefined) throw unsafe(folder, role, problem);
  return true;
}
