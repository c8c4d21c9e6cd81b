import { chmod, mkdtemp, readdir, readFile, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolRuntime } from '../tool-runtime';
import { InMemoryToolSource, RecordingLogger, TestTool } from '../testing';
import type { ApprovalDecision, ApprovalHandler, ApprovalRequest } from './approval-handler';
import type { ApprovalRecord } from './approval-store';
import { FileApprovalStore } from './file-approval-store';

const KEY = 'an approval key of at least 32 bytes, kept secret';
const folders: string[] = [];
const temporaryFolder = async (): Promise<string> => {
  const folder = await realpath(await mkdtemp(join(tmpdir(), 'ca-approvals-')));
  folders.push(folder);
  return folder;
};
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

const record = (planId: string, toolName = 't'): ApprovalRecord => ({
  version: 1,
  planId,
  toolName,
  fingerprint: 'f',
  scope: 'tool',
  decidedBy: 'me',
  decidedAt: '2026-01-01T00:00:00.000Z',
  signature: 's',
});

/** Approves every request for the rest of the plan, counting them. */
class ApproveForThePlan implements ApprovalHandler {
  readonly asked: ApprovalRequest[] = [];
  requestApproval(request: ApprovalRequest): ApprovalDecision {
    this.asked.push(request);
    return { decision: 'approve', scope: 'tool', decidedBy: 'ops' };
  }
}

describe('FileApprovalStore', () => {
  it("keeps a plan's records one a line in an owner-only folder and file, and forgets them", async () => {
    const folder = join(await temporaryFolder(), 'approvals');
    const store = new FileApprovalStore({ folder });
    expect(await store.load('p')).toEqual([]);
    await store.save(record('p', 'a'));
    await store.save(record('p', 'b'));
    await store.save(record('q', 'c'));
    expect(((await store.load('p')) as ApprovalRecord[]).map((entry) => entry.toolName)).toEqual(['a', 'b']);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(join(folder, 'p.jsonl'))).mode & 0o777).toBe(0o600);
    await store.forget('p');
    await store.forget('never-saved');
    expect(await store.load('p')).toEqual([]);
    expect(await store.load('q')).toHaveLength(1);
  });

  it('approvals survive a restart: a new runtime with the same folder and key does not ask again', async () => {
    const folder = join(await temporaryFolder(), 'approvals');
    const run = async () => {
      const handler = new ApproveForThePlan();
      const tool = new TestTool({ name: 'files.write', capability: { writes: true, checkpointable: false } });
      const runtime = new ToolRuntime({
        sources: [new InMemoryToolSource([tool])],
        logger: new RecordingLogger(),
        approvalHandler: handler,
        approvalStore: new FileApprovalStore({ folder }),
        approvalKey: KEY,
      });
      const result = await runtime.runPlan({ planId: 'nightly-sync', policy: { approval: { capabilities: ['writes'] } } }, (ctx) =>
        runtime.execute('files.write', {}, ctx),
      );
      return { handler, result };
    };
    const first = await run();
    expect(first.handler.asked).toHaveLength(1);
    const again = await run();
    expect(again.handler.asked).toHaveLength(0);
    expect(again.result.trace.approval).toMatchObject({ decision: 'approved', decidedBy: 'ops', remembered: true, scope: 'tool' });
  });

  it('hands a line that is not JSON to the runtime as it is, and refuses a file too large, a link, and a folder others may write', async () => {
    const root = await temporaryFolder();
    const folder = join(root, 'approvals');
    const store = new FileApprovalStore({ folder, maxFileBytes: 4096 });
    await store.save(record('p'));
    await writeFile(join(folder, 'p.jsonl'), `${await readFile(join(folder, 'p.jsonl'), 'utf8')}garbage\n`);
    expect((await store.load('p'))[1]).toBe('garbage');
    await writeFile(join(folder, 'big.jsonl'), 'x'.repeat(4097));
    await expect(store.load('big')).rejects.toThrow(/big\.jsonl is 4097 bytes, more than the 4096 an approvals file may have/);
    await writeFile(join(root, 'elsewhere.jsonl'), '');
    await symlink(join(root, 'elsewhere.jsonl'), join(folder, 'linked.jsonl'));
    await expect(store.load('linked')).rejects.toMatchObject({ code: 'ELOOP' });
    await expect(store.save(record('linked'))).rejects.toMatchObject({ code: 'ELOOP' });
    expect(await readFile(join(root, 'elsewhere.jsonl'), 'utf8')).toBe('');
    await chmod(folder, 0o777);
    await expect(store.load('p')).rejects.toThrow(/^The approvals folder .* cannot be used: others may write to it \(mode 777\); run chmod 700 on it$/);
    await expect(store.save(record('p'))).rejects.toThrow(/others may write to it/);
    const linkedFolder = join(root, 'linked-folder');
    await symlink(folder, linkedFolder);
    await expect(new FileApprovalStore({ folder: linkedFolder }).load('p')).rejects.toThrow(/it is a symbolic link/);
  });

  it('names a plan id that could lead elsewhere by its hash, inside the folder', async () => {
    const folder = join(await temporaryFolder(), 'approvals');
    const store = new FileApprovalStore({ folder });
    for (const planId of ['../escape', '..', 'a/b', 'x'.repeat(129)]) {
      await store.save(record(planId));
      expect(await store.load(planId)).toHaveLength(1);
    }
    const names = await readdir(folder);
    expect(names).toHaveLength(4);
    for (const name of names) expect(name).toMatch(/^plan-[0-9a-f]{64}\.jsonl$/);
    expect(store.fileOf('nightly-sync.2')).toBe(join(folder, 'nightly-sync.2.jsonl'));
  });

  it('refuses a folder that is not an absolute path, and a size that is not a whole number', () => {
    expect(() => new FileApprovalStore({ folder: 'approvals' })).toThrow(/FileApprovalStore folder must be an absolute path/);
    expect(() => new FileApprovalStore({ folder: '/tmp/x', maxFileBytes: 0 })).toThrow(/maxFileBytes must be a whole number of bytes ≥ 1/);
  });
});
