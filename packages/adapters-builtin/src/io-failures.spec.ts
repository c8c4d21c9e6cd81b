// File-system failures other than the ones with their own code (not found,
// wrong type, already exists …) come back as BUILTIN_IO_FAILED results, on
// real files: a symbolic link loop and a name longer than the file system
// allows. Both are what a model or a checked-out tree can hand a tool.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { createExecutionContext, type PlanContext } from '@ca/tool-context';
import type { ExecutionResult, ToolRuntime } from '@ca/tool-lifecycle';
import { BuiltinToolError } from './builtin-tool-error';
import { createCheckpoint, rollback } from './checkpoint';
import { folderResource, makeTemporaryFolder, removeTemporaryFolders, snapshotTree, strictRuntime } from './workspace.test-helper';

describe('BUILTIN_IO_FAILED on real file-system failures', () => {
  let work: string;
  let runtime: ToolRuntime;
  let ctx: PlanContext;

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    await symlink('loop-b', join(work, 'loop-a'));
    await symlink('loop-a', join(work, 'loop-b'));
    ({ runtime } = strictRuntime());
    ctx = createExecutionContext({ planId: 'plan-io', resources: [folderResource('work', work)] });
  });

  afterEach(removeTemporaryFolders);

  function ioFailure(result: ExecutionResult, tool: string, systemCode: string): BuiltinToolError {
    if (result.ok) throw new Error(`expected a failed result, got ${JSON.stringify(result.output)}`);
    const error = result.error;
    if (!BuiltinToolError.isInstance(error)) throw new Error(`expected a BuiltinToolError, got ${String(error)}`);
    expect(error).toMatchObject({ code: 'BUILTIN_IO_FAILED', toolName: tool, planId: 'plan-io' });
    expect(error.message).toContain(`"${tool}"`);
    expect(error.message).toContain('"plan-io"');
    expect(error.message).toContain(systemCode);
    // The system error is kept down the cause chain (through the confinement error, when that is where it met it).
    const codes: unknown[] = [];
    // (Node's system errors are not instances of Jest's own Error class: walk any object.)
    for (
      let cause = error.cause as { code?: unknown; cause?: unknown } | undefined;
      typeof cause === 'object' && cause !== null;
      cause = cause.cause as typeof cause
    ) {
      codes.push(cause.code);
    }
    expect(codes).toContain(systemCode);
    expect(result.trace).toMatchObject({ toolName: tool, success: false, error: { code: 'BUILTIN_IO_FAILED' } });
    return error;
  }

  it.each([
    ['builtin.fs.read', { path: 'loop-a' }],
    ['builtin.fs.list', { path: 'loop-a' }],
    ['builtin.fs.write', { path: 'loop-a', content: 'never written' }],
    ['builtin.fs.edit', { path: 'loop-b', oldString: 'a', newString: 'b' }],
  ])('%s through a symbolic link loop fails with ELOOP, changing nothing', async (tool, input) => {
    const before = await snapshotTree(work);
    const error = ioFailure(await runtime.execute(tool, input, ctx), tool, 'ELOOP');
    expect(error.target).toBe(join(work, String(input.path)));
    expect(await snapshotTree(work)).toEqual(before);
    expect(ctx.changes).toEqual([]);
  });

  it('builtin.fs.read of a name longer than the file system allows fails with ENAMETOOLONG', async () => {
    ioFailure(await runtime.execute('builtin.fs.read', { path: `${'n'.repeat(300)}.txt` }, ctx), 'builtin.fs.read', 'ENAMETOOLONG');
  });

  it('builtin.fs.write of a name longer than the file system allows fails with ENAMETOOLONG; the folder it made first is recorded and rolled back', async () => {
    const before = await snapshotTree(work);
    const mark = createCheckpoint(ctx);
    const result = await runtime.execute('builtin.fs.write', { path: `notes/${'n'.repeat(300)}.txt`, content: 'never written' }, ctx);
    ioFailure(result, 'builtin.fs.write', 'ENAMETOOLONG');
    expect(ctx.changes).toEqual([expect.objectContaining({ kind: 'create', target: join(work, 'notes'), toolName: 'builtin.fs.write' })]);
    expect(await rollback(ctx, mark)).toEqual({ restored: [join(work, 'notes')], skipped: [] });
    expect(await snapshotTree(work)).toEqual(before);
  });

  it('leaves the plan usable: the next call on a good path succeeds', async () => {
    ioFailure(await runtime.execute('builtin.fs.read', { path: 'loop-a' }, ctx), 'builtin.fs.read', 'ELOOP');
    expect(await runtime.execute('builtin.fs.write', { path: 'fine.txt', content: 'fine\n' }, ctx)).toMatchObject({ ok: true });
    expect(await runtime.execute('builtin.fs.read', { path: 'fine.txt' }, ctx)).toMatchObject({ ok: true, output: { content: 'fine\n' } });
  });
});
