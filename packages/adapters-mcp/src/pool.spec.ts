import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resourceFromPath, type PlanContext } from '@ca/tool-context';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { isProcessAlive } from '@ca/sandbox/testing';
import { createMcpAdapter } from './mcp-adapter';
import type { McpServerConfig } from './mcp-config';
import type { McpResourceUpdate, McpToolSource } from './mcp-tool-source';
import {
  countingSpawn,
  EVERYTHING_SERVER,
  FILESYSTEM_SERVER,
  fixtureServer,
  makeTempDir,
  readLines,
  rejectionOf,
  removeTempDir,
  waitFor,
} from './mcp-fixtures.test-helper';

jest.setTimeout(90_000);

describe('a pool of shared sessions (scope shared, poolSize)', () => {
  let spawns: ReturnType<typeof countingSpawn>;
  let logger: RecordingLogger;
  let source: McpToolSource;
  let runtime: ToolRuntime | undefined;
  let dir: string | undefined;

  beforeEach(() => {
    spawns = countingSpawn();
    logger = new RecordingLogger();
  });

  afterEach(async () => {
    await runtime?.dispose();
    runtime = undefined;
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
    await removeTempDir(dir);
    dir = undefined;
  });

  function start(servers: Record<string, McpServerConfig>, defaultScope?: 'plan' | 'shared'): ToolRuntime {
    source = createMcpAdapter({ servers: { mcpServers: servers }, spawn: spawns.spawn, logger, ...(defaultScope === undefined ? {} : { defaultScope }) });
    runtime = new ToolRuntime({ sources: [source], logger });
    return runtime;
  }

  const everything = (extra: Partial<McpServerConfig> = {}): McpServerConfig =>
    ({ command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], ...extra }) as McpServerConfig;

  it('serves many concurrent plans with at most poolSize server processes, each plan on one of them', async () => {
    const local = start({ everything: everything({ poolSize: 2 }) });
    await local.listTools();
    expect(spawns.count()).toBe(1);
    const plans = Array.from({ length: 6 }, () => local.createPlan());
    const results = await Promise.all(plans.map((ctx, index) => local.execute('mcp.everything.echo', { message: `plan ${index}` }, ctx)));
    expect(results.map((result) => result.ok && result.output)).toEqual(plans.map((_ctx, index) => `Echo: plan ${index}`));
    // The discovery session serves the first plan; the second opens the pool's second session; the rest share them.
    expect(spawns.count()).toBe(2);
    expect(source.pooledSessions('everything')).toBe(2);
    expect(source.sharedLeases('everything')).toBe(6);
    const sessions = new Set(plans.map((ctx) => source.sessionFor('everything', ctx.planId)));
    expect(sessions.size).toBe(2);
    for (const ctx of plans) await local.endPlan(ctx);
    expect(source.sharedLeases('everything')).toBe(0);
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(true);
    // Later plans start nothing.
    await local.runPlan({}, (ctx) => local.execute('mcp.everything.echo', { message: 'later' }, ctx));
    expect(spawns.count()).toBe(2);
    await local.dispose();
    for (const pid of spawns.pids) expect(isProcessAlive(pid)).toBe(false);
  });

  it('makes servers without a scope shared under defaultScope: shared, and keeps scope plan per plan', async () => {
    const local = start({ pooled: everything(), isolated: everything({ scope: 'plan' }) }, 'shared');
    await local.listTools();
    const first = spawns.count();
    const plans = [local.createPlan(), local.createPlan(), local.createPlan()];
    for (const ctx of plans) {
      expect(await local.execute('mcp.pooled.echo', { message: 'p' }, ctx)).toMatchObject({ ok: true });
      expect(await local.execute('mcp.isolated.echo', { message: 'i' }, ctx)).toMatchObject({ ok: true });
    }
    // One process for every plan of the pooled server (the one that discovered); one per plan for the isolated one.
    expect(spawns.count() - first).toBe(3);
    expect(source.pooledSessions('pooled')).toBe(1);
    expect(source.openPlanSessions('isolated')).toBe(3);
    for (const ctx of plans) await local.endPlan(ctx);
    expect(source.openPlanSessions('isolated')).toBe(0);
  });

  it('multiplexes plans over one server-everything process, each with its own progress, cancellation and traces', async () => {
    const local = start({ everything: everything({ scope: 'shared' }) });
    const a = local.createPlan({ planId: 'plan-a' });
    const b = local.createPlan({ planId: 'plan-b' });
    const progressA: { progress: number; total?: number }[] = [];
    const progressB: { progress: number; total?: number }[] = [];
    // a: 20 steps, cancelled at its second progress; b: 4 steps, to the end.
    const runningA = local.execute('mcp.everything.trigger-long-running-operation', { duration: 20, steps: 20 }, a, {
      onProgress: (progress) => {
        progressA.push(progress);
        if (progressA.length === 2) a.cancellationToken.cancel('plan a was stopped');
      },
    });
    const runningB = local.execute('mcp.everything.trigger-long-running-operation', { duration: 2, steps: 4 }, b, {
      onProgress: (progress) => progressB.push(progress),
    });
    const [outcomeA, resultB] = await Promise.allSettled([runningA, runningB]);
    expect(outcomeA.status).toBe('rejected');
    expect(outcomeA.status === 'rejected' && (outcomeA.reason as { code?: string }).code).toBe('TOOL_CANCELLED');
    expect(resultB).toMatchObject({ status: 'fulfilled', value: { ok: true, output: expect.stringContaining('Steps: 4') } });
    // One process carried both; each listener heard its own call only.
    expect(spawns.count()).toBe(1);
    expect(progressA.length).toBeGreaterThanOrEqual(2);
    expect(progressA.every((progress) => progress.total === 20)).toBe(true);
    expect(progressB.length).toBeGreaterThanOrEqual(3);
    expect(progressB.every((progress) => progress.total === 4)).toBe(true);
    // The shared connection outlived a's cancellation: b goes on.
    expect(await local.execute('mcp.everything.echo', { message: 'still here' }, b)).toMatchObject({ ok: true, output: 'Echo: still here' });
    // Each plan's traces hold its own calls, with their own outcome.
    const traced = (ctx: PlanContext) => ctx.traces.map((trace) => [trace.planId, trace.toolName, trace.success ? 'ok' : trace.error?.code]);
    expect(traced(a)).toEqual([['plan-a', 'mcp.everything.trigger-long-running-operation', 'TOOL_CANCELLED']]);
    expect(traced(b)).toEqual([
      ['plan-b', 'mcp.everything.trigger-long-running-operation', 'ok'],
      ['plan-b', 'mcp.everything.echo', 'ok'],
    ]);
    await local.endPlan(a);
    await local.endPlan(b);
  });

  it('cancels a pooled call on the server (notifications/cancelled) and leaves the other plans’ calls alone', async () => {
    dir = await makeTempDir('ca-mcp-pool-');
    const record = join(dir, 'record.txt');
    const local = start({ fixture: fixtureServer({ FIXTURE_RECORD_FILE: record }, { scope: 'shared' }) });
    const a = local.createPlan();
    const b = local.createPlan();
    const hanging = local.execute('mcp.fixture.hang', {}, a);
    await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('started hang')), 10_000, 'the hang call to start');
    a.cancellationToken.cancel('stop a');
    expect((await rejectionOf(hanging)).code).toBe('TOOL_CANCELLED');
    await waitFor(async () => (await readLines(record)).some((line) => line.startsWith('cancelled hang')), 10_000, 'the cancellation record');
    expect(await local.execute('mcp.fixture.echo', { text: 'b' }, b)).toMatchObject({ ok: true, output: 'echo: b' });
    expect(spawns.count()).toBe(1);
    await local.endPlan(a);
    await local.endPlan(b);
  });

  it('moves a plan to a new session when its pooled server died, within the plan', async () => {
    const local = start({ fixture: fixtureServer({}, { scope: 'shared' }) });
    const ctx = local.createPlan();
    const died = await local.execute('mcp.fixture.die', {}, ctx);
    expect(died.ok === false && died.error.code).toBe('MCP_SERVER_EXITED');
    // The same plan's next call runs on a new process.
    expect(await local.execute('mcp.fixture.echo', { text: 'again' }, ctx)).toMatchObject({ ok: true, output: 'echo: again' });
    expect(spawns.count()).toBe(2);
    expect(logger.at('warn').filter((entry) => /had ended; opening a new one/.test(entry.message))).toHaveLength(1);
    expect(source.pooledSessions('fixture')).toBe(1);
    await local.endPlan(ctx);
  });

  it('server-filesystem: plans share a process only with plans of the same roots', async () => {
    dir = await realpath(await makeTempDir('ca-mcp-pool-roots-'));
    const first = join(dir, 'first');
    const second = join(dir, 'second');
    await mkdir(first);
    await mkdir(second);
    await writeFile(join(first, 'mine.txt'), 'first data\n');
    await writeFile(join(second, 'other.txt'), 'second data\n');
    const local = start({ files: { command: process.execPath, args: [FILESYSTEM_SERVER], scope: 'shared' } });
    await local.discover();
    expect(spawns.count()).toBe(1);
    const onFirst = (id: string) => ({ resources: [resourceFromPath({ id, path: first, access: 'read' })] });
    const a = local.createPlan(onFirst('first'));
    const b = local.createPlan({ resources: [resourceFromPath({ id: 'second', path: second, access: 'read' })] });
    const c = local.createPlan(onFirst('first'));
    const read = (ctx: PlanContext, path: string) => local.execute('mcp.files.read_text_file', { path }, ctx);
    const [readA, readB] = await Promise.all([read(a, join(first, 'mine.txt')), read(b, join(second, 'other.txt'))]);
    expect(readA).toMatchObject({ ok: true, output: { content: 'first data\n' } });
    expect(readB).toMatchObject({ ok: true, output: { content: 'second data\n' } });
    // a took over the discovery session (given its roots); b, with other roots, got a process of its own.
    expect(spawns.count()).toBe(2);
    expect((await read(a, join(second, 'other.txt'))).ok).toBe(false);
    expect((await read(b, join(first, 'mine.txt'))).ok).toBe(false);
    // c has a's roots: a's process.
    expect(await read(c, join(first, 'mine.txt'))).toMatchObject({ ok: true });
    expect((await read(c, join(second, 'other.txt'))).ok).toBe(false);
    expect(spawns.count()).toBe(2);
    expect(source.sessionFor('files', c.planId)).toBe(source.sessionFor('files', a.planId));
    for (const ctx of [a, b, c]) await local.endPlan(ctx);
  });

  it('counts resource subscriptions per plan on a shared session, and sends updates to the plans that subscribed', async () => {
    const local = start({ everything: everything({ scope: 'shared' }) });
    const updates: McpResourceUpdate[] = [];
    source.onResourceUpdated((update) => updates.push(update));
    const a = local.createPlan({ planId: 'sub-a' });
    const b = local.createPlan({ planId: 'sub-b' });
    const uri = 'demo://resource/static/document/features.md';
    expect(await local.execute('mcp.everything.resources.subscribe', { uri }, a)).toMatchObject({ ok: true });
    expect(await local.execute('mcp.everything.resources.subscribe', { uri }, b)).toMatchObject({ ok: true });
    expect(await local.execute('mcp.everything.toggle-subscriber-updates', {}, a)).toMatchObject({ ok: true });
    await waitFor(() => updates.length >= 2, 30_000, 'an update for each plan');
    expect(new Set(updates.map((update) => update.planId))).toEqual(new Set(['sub-a', 'sub-b']));
    // a unsubscribes: b's subscription stays on the server, and only b hears of the next update.
    expect(await local.execute('mcp.everything.resources.unsubscribe', { uri }, a)).toMatchObject({ ok: true });
    updates.length = 0;
    await waitFor(() => updates.length >= 1, 30_000, 'the next update');
    expect(updates.every((update) => update.planId === 'sub-b' && update.uri === uri)).toBe(true);
    await local.endPlan(a);
    await local.endPlan(b);
  });
});
