import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { findProgram, findSystemProgram, SYSTEM_PROGRAM_FOLDERS } from './find-program';
import { makeTemporaryFolder, removeTemporaryFolders } from '../testing';
import { MAY_CHANGE_USER, runNodeAsAnotherUser } from './another-user.test-helper';

/**
 * Runs the lookup in a process of another user (nobody, 65534) when this one
 * may change users, else of this user: either way, as a user for whom
 * `locked` (mode 0700, this user's) cannot be searched — root may search any
 * folder, so the refusal needs someone else.
 */
async function lookUpAsAnotherUser(locked: string, code: string): Promise<unknown> {
  const source = await readFile(join(__dirname, 'find-program.ts'), 'utf8');
  const module = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } }).outputText;
  if (!MAY_CHANGE_USER) await chmod(locked, 0o000);
  try {
    return await runNodeAsAnotherUser(`const exports = {}; ${module}\nprocess.stdout.write(JSON.stringify(${code}));`, { PATH: `${locked}:/usr/bin:/bin` });
  } finally {
    if (!MAY_CHANGE_USER) await chmod(locked, 0o700);
  }
}

const shell = existsSync('/usr/bin/sh') ? '/usr/bin/sh' : '/bin/sh';

describe('findProgram and findSystemProgram: the PATH lookup of execvp', () => {
  afterEach(removeTemporaryFolders);

  it('skips a PATH folder it cannot search (EACCES) and finds the program in the next one, as execvp does', async () => {
    const root = await makeTemporaryFolder();
    const locked = join(root, 'locked');
    await mkdir(locked, { mode: 0o700 });
    await writeFile(join(locked, 'sh'), '#!/bin/sh\n', { mode: 0o755 });
    expect(await lookUpAsAnotherUser(locked, `[exports.findProgram('sh', process.env.PATH, '/'), exports.findSystemProgram('sh')]`)).toEqual([
      { found: true, path: shell },
      shell,
    ]);
    // Nothing found, and a folder refused access: EACCES, as execvp says then.
    expect(await lookUpAsAnotherUser(locked, `exports.findProgram('ca-no-such-program', process.env.PATH, '/')`)).toEqual({ found: false, code: 'EACCES' });
  });

  it('skips a PATH entry that is a file (ENOTDIR) or leads nowhere, and a relative one for the system programs', async () => {
    const root = await makeTemporaryFolder();
    const file = join(root, 'a-file');
    await writeFile(file, 'not a folder');
    expect(findProgram('sh', `${file}:${join(root, 'missing')}:/usr/bin:/bin`, '/')).toEqual({ found: true, path: shell });
    expect(findProgram('ca-no-such-program', `${file}:/usr/bin`, '/')).toEqual({ found: false, code: 'ENOENT' });
    expect(findProgram(join(file, 'sh'), undefined, '/')).toEqual({ found: false, code: 'ENOENT' });
    const saved = process.env['PATH'];
    process.env['PATH'] = `${file}:relative/bin`;
    try {
      // Not on this PATH at all: found in the system folders searched after it.
      expect(findSystemProgram('sh')).toMatch(/^\/(usr\/)?bin\/sh$/);
    } finally {
      process.env['PATH'] = saved;
    }
    expect(SYSTEM_PROGRAM_FOLDERS).toEqual(['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin']);
  });
});
