import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createExecutionContext } from '@ca/tool-context';
import { ToolCheckpointRequiredError } from '@ca/tool-lifecycle';
import { BuiltinToolError } from './builtin-tool-error';
import { createCheckpoint, rollback } from './checkpoint';
import { codeOf, folderResource, makeTemporaryFolder, removeTemporaryFolders, snapshotTree, strictRuntime } from './workspace.test-helper';

describe('checkpoints and rollback', () => {
  let work: string;
  let undoDirectory: string;

  beforeEach(async () => {
    work = await makeTemporaryFolder();
    undoDirectory = await makeTemporaryFolder('ca-builtin-undo-parent-');
    await mkdir(join(work, 'src/nested'), { recursive: true });
    await mkdir(join(work, 'assets'));
    await writeFile(join(work, 'src/index.ts'), 'export const answer = 41;\n');
    await writeFile(join(work, 'src/nested/tool.sh'), '#!/bin/sh\necho hi\n');
    await chmod(join(work, 'src/nested/tool.sh'), 0o750);
    await writeFile(join(work, 'assets/large.bin'), randomBytes(300_000));
    await writeFile(join(work, 'assets/small.bin'), randomBytes(100));
    await writeFile(join(work, 'README.md'), '# project\n');
  });

  afterEach(removeTemporaryFolders);

  it('restores a byte-identical tree after writes, edits and deletes in a checkpoint-required plan', async () => {
    const before = await snapshotTree(work);
    const { runtime } = strictRuntime({ undo: { directory: undoDirectory, inlineMaxBytes: 1024 } });
    const backupsDuringPlan = await runtime.runPlan(
      { planId: 'plan-rollback', policy: { requireCheckpoint: true }, resources: [folderResource('work', work)] },
      async (ctx) => {
        const mark = createCheckpoint(ctx);
        const steps = [
          await runtime.execute('builtin.fs.write', { path: 'new/deeply/nested/file.txt', content: 'fresh' }, ctx),
          await runtime.execute('builtin.fs.write', { path: 'assets/large.bin', content: randomBytes(5000).toString('base64'), encoding: 'base64' }, ctx),
          await runtime.execute('builtin.fs.write', { path: 'assets/new.bin', content: randomBytes(2000).toString('base64'), encoding: 'base64' }, ctx),
          await runtime.execute('builtin.fs.edit', { path: 'src/index.ts', oldString: '41', newString: '42' }, ctx),
          await runtime.execute('builtin.fs.write', { path: 'src/nested/tool.sh', content: 'echo replaced\n' }, ctx),
          await runtime.execute('builtin.fs.delete', { path: 'README.md' }, ctx),
          await runtime.execute('builtin.fs.delete', { path: 'assets', recursive: true }, ctx),
          await runtime.execute('builtin.fs.delete', { path: 'src', recursive: true }, ctx),
        ];
        expect(steps.map(codeOf)).toEqual(Array(steps.length).fill('ok'));
        expect(await snapshotTree(work)).not.toEqual(before);
        expect(ctx.traces).toHaveLength(steps.length);
        const backups = await readdir(undoDirectory);
        const report = await rollback(ctx, mark);
        expect(report.skipped).toEqual([]);
        expect(report.restored).toHaveLength(ctx.changes.length);
        expect(await snapshotTree(work)).toEqual(before);
        return backups;
      },
    );
    // Large previous contents went to a backup folder, removed when the plan ended.
    expect(backupsDuringPlan).toHaveLength(1);
    expect(await readdir(undoDirectory)).toEqual([]);
  });

  it('rolls back only what came after the checkpoint, never twice, and reports changes it cannot undo', async () => {
    const { runtime } = strictRuntime();
    const ctx = createExecutionContext({ planId: 'plan-partial', resources: [folderResource('work', work)] });
    await runtime.execute('builtin.fs.write', { path: 'first.txt', content: 'one' }, ctx);
    const mark = createCheckpoint(ctx);
    await runtime.execute('builtin.fs.write', { path: 'first.txt', content: 'two' }, ctx);
    await runtime.execute('builtin.fs.write', { path: 'second.txt', content: 'two' }, ctx);
    ctx.recordChange({ kind: 'other', target: 'https://api.example.com/items/1', toolName: 'custom.post', executionId: 'e-1', at: new Date().toISOString() });

    const report = await rollback(ctx, mark);
    expect(report.restored).toEqual([join(work, 'second.txt'), join(work, 'first.txt')]);
    expect(report.skipped.map((change) => change.toolName)).toEqual(['custom.post']);
    expect(await readFile(join(work, 'first.txt'), 'utf8')).toBe('one');
    await expect(readFile(join(work, 'second.txt'))).rejects.toMatchObject({ code: 'ENOENT' });

    await writeFile(join(work, 'first.txt'), 'edited by hand');
    expect((await rollback(ctx, mark)).restored).toEqual([]);
    expect(await readFile(join(work, 'first.txt'), 'utf8')).toBe('edited by hand');
    await runtime.endPlan(ctx);
  });

  it('refuses a checkpoint of another plan, and undo data that points outside the writable resources', async () => {
    const outside = await makeTemporaryFolder();
    await writeFile(join(outside, 'keep.txt'), 'keep');
    const ctx = createExecutionContext({ planId: 'plan-a', resources: [folderResource('work', work)] });
    const other = createExecutionContext({ planId: 'plan-b' });
    await expect(rollback(ctx, createCheckpoint(other))).rejects.toMatchObject({ code: 'BUILTIN_ROLLBACK_FAILED' });
    await expect(rollback(ctx, { planId: 'plan-a', changeCount: 5 })).rejects.toThrow(/not a checkpoint of this plan/);

    const mark = createCheckpoint(ctx);
    ctx.recordChange({
      kind: 'create',
      target: join(outside, 'keep.txt'),
      toolName: 'forged',
      executionId: 'e-1',
      at: new Date().toISOString(),
      undo: { format: 'ca.builtin.file-undo/1', path: join(outside, 'keep.txt'), before: { type: 'absent' } },
    });
    const error = await rollback(ctx, mark).catch((caught: unknown) => caught);
    expect(BuiltinToolError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'BUILTIN_ROLLBACK_FAILED', planId: 'plan-a' });
    expect((error as Error).message).toMatch(/outside/);
    expect((error as Error).cause).toBeInstanceOf(AggregateError);
    expect(await readFile(join(outside, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('cannot restore a large file after the plan ended and its backups were removed, and says why', async () => {
    const { runtime } = strictRuntime({ undo: { directory: undoDirectory, inlineMaxBytes: 4 } });
    const ctx = runtime.createPlan({ planId: 'plan-ended', resources: [folderResource('work', work)] });
    const mark = createCheckpoint(ctx);
    await runtime.execute('builtin.fs.write', { path: 'README.md', content: 'changed' }, ctx);
    await runtime.endPlan(ctx);
    await expect(rollback(ctx, mark)).rejects.toMatchObject({ code: 'BUILTIN_ROLLBACK_FAILED', message: expect.stringMatching(/README\.md/) });
  });

  it('keeps every change of a delete cancelled half-way undoable', async () => {
    for (let folder = 0; folder < 10; folder++) {
      await mkdir(join(work, 'many', `d${folder}`), { recursive: true });
      for (let file = 0; file < 30; file++) await writeFile(join(work, 'many', `d${folder}`, `f${file}.txt`), `${folder}/${file}`);
    }
    const before = await snapshotTree(work);
    const { runtime } = strictRuntime();
    const ctx = runtime.createPlan({ planId: 'plan-cancel', resources: [folderResource('work', work)] });
    const mark = createCheckpoint(ctx);
    const pending = runtime.execute('builtin.fs.delete', { path: 'many', recursive: true }, ctx).catch((error: unknown) => error);
    // Cancel as soon as the first file is gone, so the delete is stopped half-way.
    const countFiles = async (): Promise<number> =>
      (
        await Promise.all(
          Array.from({ length: 10 }, (_, folder) =>
            readdir(join(work, 'many', `d${folder}`)).then(
              (names) => names.length,
              () => 0,
            ),
          ),
        )
      ).reduce((sum, count) => sum + count, 0);
    for (let attempt = 0; attempt < 10_000 && (await countFiles()) === 300; attempt++) await new Promise((resolve) => setImmediate(resolve));
    ctx.cancellationToken.cancel('cancelled by user');
    expect(await pending).toMatchObject({ code: 'TOOL_CANCELLED' });
    // endPlan waits for the tool to stop; every entry it removed must have been recorded.
    await runtime.endPlan(ctx);
    const after = await snapshotTree(work);
    const removed = Object.keys(before).filter((path) => !(path in after));
    expect(removed.length).toBeGreaterThan(0);
    expect(removed.length).toBeLessThan(Object.keys(before).length);
    expect(ctx.changes.map((change) => change.target).sort()).toEqual(removed.map((path) => join(work, path)).sort());
    expect(ctx.changes.every((change) => change.toolName === 'builtin.fs.delete' && change.executionId.length > 0)).toBe(true);
    await rollback(ctx, mark);
    expect(await snapshotTree(work)).toEqual(before);
  });

  it('keeps commands without the sandbox and write-capable HTTP out of checkpoint-required plans, but not the file tools', async () => {
    const { runtime } = strictRuntime({ command: { sandbox: 'off' } });
    const ctx = runtime.createPlan({ planId: 'plan-strict', policy: { requireCheckpoint: true }, resources: [folderResource('work', work)] });
    const refused = await runtime.execute('builtin.command.run', { command: ['touch', 'x'] }, ctx).catch((error: unknown) => error);
    expect(ToolCheckpointRequiredError.isInstance(refused)).toBe(true);
    const http = await runtime.execute('builtin.http.request', { url: 'http://127.0.0.1:1/' }, ctx).catch((error: unknown) => error);
    expect(ToolCheckpointRequiredError.isInstance(http)).toBe(true);
    expect(codeOf(await runtime.execute('builtin.fs.write', { path: 'ok.txt', content: 'ok' }, ctx))).toBe('ok');
    expect(codeOf(await runtime.execute('builtin.fs.read', { path: 'ok.txt' }, ctx))).toBe('ok');
    expect(codeOf(await runtime.execute('builtin.fs.grep', { pattern: 'ok' }, ctx))).toBe('ok');
    expect(ctx.traces.map((trace) => [trace.toolName, trace.success])).toEqual([
      ['builtin.command.run', false],
      ['builtin.http.request', false],
      ['builtin.fs.write', true],
      ['builtin.fs.read', true],
      ['builtin.fs.grep', true],
    ]);
    await runtime.endPlan(ctx);
  });
});
