import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { FileResultStore } from './file-result-store';
import { FileToolListCache } from './file-tool-list-cache';
import { silentLogger } from '@ca/tool-lifecycle';
import { buildRuntime } from './build-runtime';
import { loadConfig } from './config';
import { EXIT_CODES, main } from './index';

afterEach(() => removeTemporaryFolders());

const record = (planId: string, handle: string) => ({
  planId,
  handle,
  toolName: 'logs.dump',
  executionId: 'exec-1',
  format: 'text' as const,
  createdAt: new Date().toISOString(),
});
const HANDLE = `res-${'a1'.repeat(12)}`;
const summary = { bytes: 11, lines: 2, lineMarks: [[1, 0]] as [number, number][] };

async function storeOne(store: FileResultStore, planId = 'plan-1', handle = HANDLE): Promise<void> {
  const writer = await store.create(record(planId, handle));
  await writer.append(Buffer.from('hello\n'));
  await writer.append(Buffer.from('world'));
  await writer.finish(summary);
}

const planFolder = (root: string, planId: string) => path.join(root, 'results', createHash('sha256').update(planId).digest('hex').slice(0, 32));

describe('FileResultStore, the command’s result store', () => {
  it('keeps each document whole in a private folder of its plan, reads ranges, and deletes the plan’s folder', async () => {
    const state = temporaryFolder();
    const store = new FileResultStore(path.join(state, 'results'));
    const writer = await store.create(record('plan-1', HANDLE));
    await writer.append(Buffer.from('hello\n'));
    // Nothing of a document can be read before it is finished.
    expect(await store.get('plan-1', HANDLE)).toBeUndefined();
    await writer.append(Buffer.from('world'));
    await writer.finish(summary);
    expect(await store.get('plan-1', HANDLE)).toMatchObject({ planId: 'plan-1', handle: HANDLE, bytes: 11, lines: 2 });
    expect(Buffer.from(await store.read('plan-1', HANDLE, 3, 9)).toString()).toBe('lo\nwor');
    const folder = planFolder(state, 'plan-1');
    expect(fs.statSync(folder).mode & 0o777).toBe(0o700);
    expect(fs.readdirSync(folder).sort()).toEqual([`${HANDLE}.data`, `${HANDLE}.json`]);
    expect(fs.statSync(path.join(folder, `${HANDLE}.data`)).mode & 0o777).toBe(0o600);
    // Another plan does not see it.
    expect(await store.get('plan-2', HANDLE)).toBeUndefined();
    await store.dropPlan('plan-1');
    expect(fs.existsSync(folder)).toBe(false);
    expect(await store.get('plan-1', HANDLE)).toBeUndefined();
    await store.dropPlan('plan-1');
  });

  it('leaves nothing of a document given up, and refuses a name that is not a handle', async () => {
    const state = temporaryFolder();
    const store = new FileResultStore(path.join(state, 'results'));
    const writer = await store.create(record('plan-1', HANDLE));
    await writer.append(Buffer.from('partial'));
    await writer.abort();
    expect(fs.readdirSync(planFolder(state, 'plan-1'))).toEqual([]);
    await expect(store.create(record('plan-1', '../../escape'))).rejects.toThrow('is not a result handle');
    await expect(store.read('plan-1', '../x', 0, 1)).rejects.toThrow('is not a result handle');
    expect(await store.get('plan-1', '../x')).toBeUndefined();
  });

  it('refuses a plan folder swapped for a link, and a results folder that is one', async () => {
    const state = temporaryFolder();
    const elsewhere = temporaryFolder();
    const store = new FileResultStore(path.join(state, 'results'));
    await storeOne(store);
    const folder = planFolder(state, 'plan-1');
    fs.renameSync(folder, path.join(elsewhere, 'moved'));
    fs.symlinkSync(path.join(elsewhere, 'moved'), folder);
    const refused = store.get('plan-1', HANDLE);
    await expect(refused).rejects.toMatchObject({ code: 'CLI_STATE_UNSAFE', name: 'CliError' });
    await expect(store.read('plan-1', HANDLE, 0, 5)).rejects.toThrow(/symbolic link/);
    await expect(store.create(record('plan-1', `res-${'b2'.repeat(12)}`))).rejects.toThrow(/symbolic link/);
    // Dropping the plan removes the link, never what it points to.
    await expect(store.dropPlan('plan-1')).rejects.toThrow(/symbolic link/);
    expect(fs.readdirSync(path.join(elsewhere, 'moved')).length).toBe(2);

    const linked = temporaryFolder();
    fs.symlinkSync(elsewhere, path.join(linked, 'results'));
    await expect(new FileResultStore(path.join(linked, 'results')).create(record('plan-1', HANDLE))).rejects.toThrow(/symbolic link/);
  });
});

describe('FileToolListCache', () => {
  const KEY = 'f'.repeat(64);
  const entry = {
    server: 's',
    savedAt: new Date().toISOString(),
    listing: { tools: [{ name: 'echo' }], offer: { resources: false, subscribe: false, prompts: false }, runsToolTasks: false },
  };

  it('keeps entries in private files, reads nothing with refresh, and takes a file it cannot parse for no entry', async () => {
    const folder = path.join(temporaryFolder(), 'mcp-tools');
    const cache = new FileToolListCache(folder);
    expect(await cache.load(KEY)).toBeUndefined();
    await cache.save(KEY, entry as never);
    expect(await cache.load(KEY)).toEqual(entry);
    expect(fs.statSync(path.join(folder, `${KEY}.json`)).mode & 0o777).toBe(0o600);
    expect(await new FileToolListCache(folder, { refresh: true }).load(KEY)).toBeUndefined();
    fs.writeFileSync(path.join(folder, `${KEY}.json`), '{ not json');
    expect(await cache.load(KEY)).toBeUndefined();
    expect(await cache.load('../../etc/passwd')).toBeUndefined();
    await expect(cache.save('../x', entry as never)).rejects.toThrow('is not a key');
  });

  it('refuses a cache folder that is a link, or a link in place of an entry', async () => {
    const state = temporaryFolder();
    const elsewhere = temporaryFolder();
    fs.symlinkSync(elsewhere, path.join(state, 'mcp-tools'));
    const linked = new FileToolListCache(path.join(state, 'mcp-tools'));
    await expect(linked.load(KEY)).rejects.toMatchObject({ code: 'CLI_STATE_UNSAFE', name: 'CliError' });
    await expect(linked.save(KEY, entry as never)).rejects.toThrow(/symbolic link/);

    const folder = path.join(temporaryFolder(), 'mcp-tools');
    const cache = new FileToolListCache(folder);
    await cache.save(KEY, entry as never);
    const secret = writeFixture(elsewhere, 'secret.json', JSON.stringify(entry));
    fs.rmSync(path.join(folder, `${KEY}.json`));
    fs.symlinkSync(secret, path.join(folder, `${KEY}.json`));
    await expect(cache.load(KEY)).rejects.toThrow();
  });
});

describe('results over the budget in the agents command', () => {
  it('prints the handle and preview of a large output, and deletes the plan’s results when the command ends', async () => {
    const workspace = temporaryFolder();
    const state = temporaryFolder();
    writeFixture(workspace, 'big.log', Array.from({ length: 4000 }, (_, index) => `line ${index + 1} password=hunter2hunter2`).join('\n'));
    const config = writeFixture(
      workspace,
      'agents.config.json',
      JSON.stringify({
        runtime: { outputBudget: { bytes: 4096 } },
        builtin: { tools: ['builtin.fs.read'] },
        resources: [{ id: 'work', path: workspace, access: 'read' }],
      }),
    );
    const io = captureIo({ AGENTS_STATE_DIR: state }, workspace);
    expect(await main(['-c', config, 'tools', 'run', 'builtin.fs.read', '--input', '{"resource":"work","path":"big.log"}'], io)).toBe(EXIT_CODES.ok);
    const printed = JSON.parse(io.out()) as { handle: string; format: string; shape: string; note: string };
    expect(printed.handle).toMatch(/^res-[a-z0-9]{24}$/);
    expect(printed.format).toBe('json');
    expect(printed.shape).toContain('"content": string');
    expect(io.out()).not.toContain('hunter2');
    // The plan ended with the command: none of its results is left.
    expect(fs.existsSync(path.join(state, 'results')) ? fs.readdirSync(path.join(state, 'results')) : []).toEqual([]);
    // A bound against a hang only: the command reads and scans 100 KB of secret-laden lines, slow on a loaded machine.
  }, 60_000);

  it('stores in the state folder for the plan’s reads, and deletes it all when the plan ends', async () => {
    const workspace = temporaryFolder();
    const state = temporaryFolder();
    writeFixture(workspace, 'big.log', Array.from({ length: 4000 }, (_, index) => `line ${index + 1} token=ghp_${'x'.repeat(36)}`).join('\n'));
    const config = loadConfig({
      file: writeFixture(
        workspace,
        'agents.config.json',
        JSON.stringify({
          runtime: { outputBudget: { bytes: 4096 } },
          builtin: { tools: ['builtin.fs.read'] },
          resources: [{ id: 'work', path: workspace, access: 'read' }],
        }),
      ),
      cwd: workspace,
      env: {},
    });
    const built = await buildRuntime(config, silentLogger, { resultStore: new FileResultStore(path.join(state, 'results')) });
    try {
      await built.runtime.runPlan({ planId: 'read-big-log', resources: config.resources }, async (ctx) => {
        const result = await built.runtime.execute('builtin.fs.read', { resource: 'work', path: 'big.log' }, ctx);
        expect(result.handle?.format).toBe('json');
        const handle = result.handle?.handle as string;
        const found = await built.runtime.execute('results.grep', { handle, pattern: '^  "unit": "lines"' }, ctx);
        expect(found.output).toMatchObject({ matches: [{ text: '  "unit": "lines",' }] });
        const content = await built.runtime.execute('results.read', { handle, pointer: '/content', maxBytes: 256 }, ctx);
        const read = content.output as { text: string; truncated: boolean };
        expect(read.truncated).toBe(true);
        // The output guardrail redacted the tokens before the output was stored (a secret-named parameter, a known token shape).
        expect(read.text).toMatch(/^"line 1 token=\[REDACTED [a-z-]+\]\\nline 2 token=\[REDACTED [a-z-]+\]\\n/);
        expect(Buffer.byteLength(read.text)).toBeLessThanOrEqual(256);
        const stored = fs.readdirSync(path.join(state, 'results'));
        expect(stored).toHaveLength(1);
        const files = fs.readdirSync(path.join(state, 'results', stored[0] as string));
        expect(files.sort()).toEqual([`${handle}.data`, `${handle}.json`]);
        expect(fs.readFileSync(path.join(state, 'results', stored[0] as string, `${handle}.data`), 'utf8')).not.toContain('ghp_');
      });
      expect(fs.readdirSync(path.join(state, 'results'))).toEqual([]);
    } finally {
      await built.dispose();
    }
  });
});
