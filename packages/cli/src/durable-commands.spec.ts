import net from 'node:net';
import type { PlanContext } from '@ca/tool-context';
import type { DurableSteps } from '@ca/plan-restate';
import type { ToolRuntime } from '@ca/tool-lifecycle';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { exitCodeOfSteps, planFileFunction } from './durable-plan-file';
import { EXIT_CODES, main } from './index';

// Without a Restate server: what the durable commands refuse, and what the workers' plan function refuses.
// Their runs against a real restate-server are in durable-cli.spec.ts.
afterAll(removeTemporaryFolders);

/** A port nothing listens on (Restate that cannot be reached). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function folderWith(config: unknown): string {
  const folder = temporaryFolder();
  writeFixture(folder, 'agents.config.json', JSON.stringify(config));
  writeFixture(folder, 'plan.json', JSON.stringify({ id: 'p1', steps: [{ id: 'one', tool: 'builtin.fs.read', input: { path: 'x' } }] }));
  return folder;
}

describe('durable commands without Restate', () => {
  it('agents worker without a "durable" section says what to add (exit 2)', async () => {
    const io = captureIo({}, folderWith({ builtin: true }));
    expect(await main(['worker', '--port', '0'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/CLI_USAGE: agents worker needs Restate.*"durable": \{ "ingressUrl"/);
  });

  it('plan run --durable without a "durable" section, and --detach without --durable, are usage errors', async () => {
    const folder = folderWith({ builtin: true });
    const io = captureIo({}, folder);
    expect(await main(['plan', 'run', 'plan.json', '--durable'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/agents plan run --durable needs Restate/);
    const detached = captureIo({}, folder);
    expect(await main(['plan', 'run', 'plan.json', '--detach'], detached)).toBe(EXIT_CODES.usage);
    expect(detached.err()).toMatch(/--detach starts a durable plan; add --durable/);
  });

  it('an invalid "durable" section is refused with the key named', async () => {
    const io = captureIo({}, folderWith({ durable: { ingressUrl: 'ftp://x', adminUrl: 'http://127.0.0.1:1' } }));
    expect(await main(['plan', 'run', 'plan.json', '--durable'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/CLI_CONFIG_INVALID.*durable/s);
  });

  it('Restate that cannot be reached: plan run --durable fails with CLI_DURABLE_UNAVAILABLE (exit 1), and plan list still lists the registry', async () => {
    const port = await closedPort();
    const folder = folderWith({ durable: { ingressUrl: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${port}` } });
    const run = captureIo({}, folder);
    expect(await main(['plan', 'run', 'plan.json', '--durable'], run)).toBe(EXIT_CODES.failed);
    expect(run.err()).toMatch(/CLI_DURABLE_UNAVAILABLE: Restate could not be reached to start plans/);
    const list = captureIo({}, folder);
    expect(await main(['plan', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toBe('No plan is running.\n');
    expect(list.err()).toMatch(/warning: durable plans could not be listed/);
    // A plan id that is not a durable one goes to the registry as before.
    const cancel = captureIo({}, folder);
    expect(await main(['plan', 'cancel', 'nothing-here'], cancel)).toBe(EXIT_CODES.notFound);
  });

  it('plan list reads only the "durable" and "registry" keys: variables of the tools need not be set', async () => {
    const port = await closedPort();
    const folder = folderWith({
      durable: { ingressUrl: `http://127.0.0.1:${port}`, adminUrl: `http://127.0.0.1:${port}` },
      mcpServers: { remote: { url: '${UNSET_VARIABLE_OF_A_TOOL}' } },
    });
    const list = captureIo({}, folder);
    expect(await main(['plan', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.err()).not.toMatch(/UNSET_VARIABLE_OF_A_TOOL/);
  });
});

describe("the workers' plan function", () => {
  const fn = planFileFunction('test-host');
  const ctx = { planId: 'p', changes: [], cancellationToken: { isCancelled: false } } as unknown as PlanContext;
  const runtime = {} as ToolRuntime;
  const steps: DurableSteps = { run: async (_name, work) => work() };

  it.each([
    ['no steps array', { file: 'x' }],
    ['a step without an id', { file: 'x', steps: [{ kind: 'tool', tool: 'a' }] }],
    ['a step of another kind', { file: 'x', steps: [{ kind: 'shell', id: 'a', tool: 'rm -rf /' }] }],
    [
      'two steps of one id',
      {
        file: 'x',
        steps: [
          { kind: 'tool', id: 'a', tool: 'a' },
          { kind: 'tool', id: 'a', tool: 'b' },
        ],
      },
    ],
    ['null', null],
  ])('refuses hostile input: %s', async (_label, input) => {
    await expect(fn(ctx, input, runtime, steps)).rejects.toThrow(/durable plan file/);
  });

  it('exit codes of step reports are those of plain runs', () => {
    expect(exitCodeOfSteps([{ id: 'a', tool: 't', outcome: 'ok', asExpected: true, durationMs: 1 }])).toBe(EXIT_CODES.ok);
    expect(exitCodeOfSteps([{ id: 'a', tool: 't', outcome: 'refused', asExpected: false, durationMs: 1 }])).toBe(EXIT_CODES.refused);
    expect(
      exitCodeOfSteps([
        { id: 'a', tool: 't', outcome: 'cancelled', asExpected: false, durationMs: 1 },
        { id: 'b', tool: 't', outcome: 'skipped', asExpected: false, durationMs: 0 },
      ]),
    ).toBe(EXIT_CODES.cancelled);
    expect(exitCodeOfSteps([{ id: 'a', tool: 't', outcome: 'not-found', asExpected: false, durationMs: 1 }])).toBe(EXIT_CODES.notFound);
  });
});
