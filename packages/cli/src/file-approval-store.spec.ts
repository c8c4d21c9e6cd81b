import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './cli-error';
import { removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { FileApprovalStore, approvalKey } from './file-approval-store';

afterEach(() => removeTemporaryFolders());

const record = (planId: string, toolName = 't') => ({
  version: 1 as const,
  planId,
  toolName,
  fingerprint: 'f',
  scope: 'tool' as const,
  decidedBy: 'me',
  decidedAt: '2026-01-01T00:00:00.000Z',
  signature: 's',
});

describe('FileApprovalStore', () => {
  it("keeps a plan's records one a line, in an owner-only folder, and forgets them", async () => {
    const stateDir = temporaryFolder();
    const store = new FileApprovalStore(stateDir);
    expect(await store.load('p')).toEqual([]);
    await store.save(record('p', 'a'));
    await store.save(record('p', 'b'));
    await store.save(record('q', 'c'));
    expect(((await store.load('p')) as { toolName: string }[]).map((entry) => entry.toolName)).toEqual(['a', 'b']);
    const folder = path.join(stateDir, 'approvals');
    expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(folder, 'p.jsonl')).mode & 0o777).toBe(0o600);
    await store.forget('p');
    expect(await store.load('p')).toEqual([]);
    expect(await store.load('q')).toHaveLength(1);
  });

  it('hands lines that are not JSON to the runtime as they are (it refuses them), and refuses a file too large to be one', async () => {
    const stateDir = temporaryFolder();
    const store = new FileApprovalStore(stateDir);
    await store.save(record('p'));
    fs.appendFileSync(path.join(stateDir, 'approvals', 'p.jsonl'), 'garbage\n');
    expect((await store.load('p'))[1]).toBe('garbage');
    fs.writeFileSync(path.join(stateDir, 'approvals', 'big.jsonl'), 'x'.repeat(1024 * 1024 + 1));
    await expect(store.load('big')).rejects.toThrow(/more than the 1048576 an approvals file may have/);
  });

  it('refuses an approvals folder others may write to: they could add approvals of their own', async () => {
    const stateDir = temporaryFolder();
    const store = new FileApprovalStore(stateDir);
    await store.save(record('p'));
    fs.chmodSync(path.join(stateDir, 'approvals'), 0o777);
    await expect(store.load('p')).rejects.toMatchObject({
      code: 'CLI_STATE_UNSAFE',
      message: expect.stringContaining('(kept approvals): others may write to it (mode 777)'),
    });
    await expect(store.save(record('p'))).rejects.toMatchObject({ code: 'CLI_STATE_UNSAFE' });
  });

  it('refuses a plan id that could name a file elsewhere', async () => {
    const store = new FileApprovalStore(temporaryFolder());
    await expect(store.load('../escape')).rejects.toThrow(CliError);
  });
});

describe('approvalKey', () => {
  it('makes a key of 32 random bytes on first use, owner-only, and reuses it', () => {
    const stateDir = temporaryFolder();
    const key = approvalKey(stateDir, {});
    expect(Buffer.from(key, 'base64')).toHaveLength(32);
    expect(fs.statSync(path.join(stateDir, 'approval.key')).mode & 0o777).toBe(0o600);
    expect(approvalKey(stateDir, {})).toBe(key);
  });

  it('refuses a key others may read, a key that is a link, and a state folder others may write to', () => {
    const stateDir = temporaryFolder();
    approvalKey(stateDir, {});
    const file = path.join(stateDir, 'approval.key');
    fs.chmodSync(file, 0o644);
    expect(() => approvalKey(stateDir, {})).toThrow(
      /^The approval key .*approval\.key cannot be used: others may read or change it \(mode 644\); run chmod 600 on it\. Whoever can read it can forge approvals\./,
    );
    fs.rmSync(file);
    fs.symlinkSync(path.join(temporaryFolder(), 'elsewhere.key'), file);
    expect(() => approvalKey(stateDir, {})).toThrow(/cannot be used: it is not a regular file/);
    const open = temporaryFolder();
    fs.chmodSync(open, 0o757);
    expect(() => approvalKey(open, {})).toThrow(/\(the approval key\): others may write to it \(mode 757\)/);
    expect(fs.existsSync(path.join(open, 'approval.key'))).toBe(false);
  });

  it('takes AGENTS_APPROVAL_KEY when set, and refuses one too short', () => {
    const stateDir = temporaryFolder();
    expect(approvalKey(stateDir, { AGENTS_APPROVAL_KEY: 'k'.repeat(32) })).toBe('k'.repeat(32));
    expect(fs.existsSync(path.join(stateDir, 'approval.key'))).toBe(false);
    expect(() => approvalKey(stateDir, { AGENTS_APPROVAL_KEY: 'short' })).toThrow(/AGENTS_APPROVAL_KEY has 5 bytes; it must have at least 32/);
  });
});
