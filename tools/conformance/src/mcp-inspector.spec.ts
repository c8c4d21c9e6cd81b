// The MCP Inspector (@modelcontextprotocol/inspector 2.x, in the runner
// folder, under Node 22) in its CLI mode as an outside client of `agents mcp
// serve` over stdio (the built CLI), fronting the built-in tools and
// @modelcontextprotocol/server-everything. Each run is one inspector command:
// it starts the gateway, initializes, does one method and exits; the gateway
// (and the server behind it) must end with it. And over Streamable HTTP
// through a replica set: three `agents mcp serve --http --fleet` behind a
// plain round-robin proxy (no affinity).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureRunnerInstalled, INSPECTOR_CLI, runWithNode22, type RunnerOutput } from './runner';

const CLI_BIN = join(__dirname, '..', '..', '..', 'packages', 'cli', 'dist', 'bin.js');
const EVERYTHING_STDIO = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'transports', 'stdio.js');
const { startRoundRobinProxy } = require(join(__dirname, '..', '..', '..', 'packages', 'mcp-server', 'src', '__fixtures__', 'round-robin-proxy.js')) as {
  startRoundRobinProxy: (backends: readonly string[]) => Promise<{ url: URL; counts: number[]; close(): Promise<void> }>;
};
/** Every process of one run carries this variable: what is still alive after the run is a leftover. */
const MARK_VARIABLE = 'CA_INSPECTOR_TEST_MARK';

let folder: string;
let work: string;
let runs = 0;

interface InspectorTool {
  readonly name: string;
  readonly inputSchema?: { readonly type?: string };
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean };
}

interface InspectorResult {
  readonly run: RunnerOutput;
  /** `--format json` prints `{ result }` on stdout, or `{ error: { code, message } }` on stderr. */
  readonly result?: {
    readonly tools?: InspectorTool[];
    readonly content?: { type: string; text?: string }[];
    readonly structuredContent?: Record<string, unknown>;
    readonly isError?: boolean;
  };
  readonly error?: { readonly code: string; readonly message: string };
  /** Processes of this run still alive once the inspector had exited. */
  readonly leftovers: readonly number[];
}

/** The processes (of this user) whose environment holds `mark`. */
function markedProcesses(mark: string): number[] {
  const needle = `${MARK_VARIABLE}=${mark}\0`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(needle)) found.push(Number(entry));
    } catch {
      // Gone, or another user's.
    }
  }
  return found;
}

/** Waits (a hang guard, not a timing check) until no process of the run is alive; returns those that still are. */
async function leftoversOf(mark: string): Promise<number[]> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    const alive = markedProcesses(mark);
    if (alive.length === 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const alive = markedProcesses(mark);
  for (const pid of alive) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Ended meanwhile.
    }
  }
  return alive;
}

/**
 * `inspector --cli --format json -q <gateway command> <inspector args>`: the
 * gateway is `node packages/cli/dist/bin.js -c <config> mcp serve --resource
 * work=<folder>:write <serveArgs>`, started by the inspector over stdio.
 */
async function inspect(
  serveArgs: readonly string[],
  inspectorArgs: (mark: string) => readonly string[],
  whileRunning?: (inspectorPid: number, mark: string) => void,
): Promise<InspectorResult> {
  runs += 1;
  const mark = `${process.pid}-${runs}`;
  writeFileSync(
    join(folder, 'agents.config.json'),
    JSON.stringify({
      builtin: true,
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_STDIO], env: { [MARK_VARIABLE]: mark } } },
      approval: { policy: { tools: ['builtin.fs.delete'] } },
    }),
  );
  const run = await runWithNode22(
    [
      INSPECTOR_CLI,
      '--cli',
      '--format',
      'json',
      '--quiet',
      '-e',
      `${MARK_VARIABLE}=${mark}`,
      '-e',
      `AGENTS_STATE_DIR=${join(folder, 'state')}`,
      process.execPath,
      CLI_BIN,
      '-c',
      join(folder, 'agents.config.json'),
      'mcp',
      'serve',
      '--resource',
      `work=${work}:write`,
      ...serveArgs,
      ...inspectorArgs(mark),
    ],
    {
      timeoutMs: 90_000,
      killGroupAtExit: false,
      onStart: whileRunning === undefined ? undefined : (pid) => whileRunning(pid, mark),
      env: { PATH: process.env['PATH'] ?? '', HOME: join(folder, 'home') },
    },
  );
  const leftovers = await leftoversOf(mark);
  const parse = (text: string): Partial<InspectorResult> => {
    try {
      return JSON.parse(text) as Partial<InspectorResult>;
    } catch {
      return {};
    }
  };
  const parsed = run.stdout.trim() !== '' ? parse(run.stdout) : parse(run.stderr);
  return { run, result: parsed.result, error: parsed.error, leftovers };
}

function describeRun(result: InspectorResult): string {
  return `exit ${result.run.exitCode}${result.run.timedOut ? ' (timed out)' : ''}\nstdout: ${result.run.stdout}\nstderr: ${result.run.stderr}`;
}

/** Exit 0, nothing left behind; on failure the message shows what the inspector printed. */
function expectSuccess(result: InspectorResult): void {
  expect({ exit: result.run.exitCode, leftovers: result.leftovers, output: result.run.exitCode === 0 ? '' : describeRun(result) }).toEqual({
    exit: 0,
    leftovers: [],
    output: '',
  });
}

function textOf(result: InspectorResult): string {
  return (result.result?.content ?? []).map((block) => block.text ?? '').join('\n');
}

beforeAll(async () => {
  await ensureRunnerInstalled();
  folder = mkdtempSync(join(tmpdir(), 'ca-inspector-'));
  work = join(folder, 'work');
  mkdirSync(work);
  mkdirSync(join(folder, 'home'));
  writeFileSync(join(work, 'notes.txt'), 'first line\nsecond line\n');
}, 300_000);

afterAll(() => {
  if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
});

describe('MCP Inspector CLI against agents mcp serve (stdio)', () => {
  it('lists the configured tools, built-in and upstream, with annotations that state what they can do', async () => {
    const listed = await inspect([], () => ['--method', 'tools/list']);
    expectSuccess(listed);
    const tools = new Map((listed.result?.tools ?? []).map((tool) => [tool.name, tool]));
    expect([...tools.keys()]).toEqual(
      expect.arrayContaining([
        'builtin.fs.read',
        'builtin.fs.write',
        'builtin.fs.delete',
        'builtin.command.run',
        'mcp.everything.echo',
        'mcp.everything.get-sum',
      ]),
    );
    for (const tool of tools.values()) expect({ name: tool.name, type: tool.inputSchema?.type }).toEqual({ name: tool.name, type: 'object' });
    expect(tools.get('builtin.fs.read')?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(tools.get('builtin.fs.write')?.annotations).toMatchObject({ readOnlyHint: false });
    expect(tools.get('builtin.fs.delete')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    // Commands may write what the plan lets them in a read-write plan.
    expect(tools.get('builtin.command.run')?.annotations).toMatchObject({ readOnlyHint: false });
    // server-everything declares no annotations: the gateway does not claim its tools only read.
    expect(tools.get('mcp.everything.echo')?.annotations?.readOnlyHint).toBe(false);
  }, 120_000);

  it('with the read-only profile, lists only tools that cannot write in that plan', async () => {
    const listed = await inspect(['--profile', 'read-only'], () => ['--method', 'tools/list']);
    expectSuccess(listed);
    const tools = listed.result?.tools ?? [];
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['builtin.fs.read', 'builtin.fs.list', 'builtin.fs.grep']));
    expect(names.filter((name) => ['builtin.fs.write', 'builtin.fs.edit', 'builtin.fs.delete', 'mcp.everything.echo'].includes(name))).toEqual([]);
    expect(tools.filter((tool) => tool.annotations?.readOnlyHint !== true).map((tool) => tool.name)).toEqual([]);
  }, 120_000);

  it('calls a built-in tool and an upstream tool, and returns their results', async () => {
    const read = await inspect([], () => ['--method', 'tools/call', '--tool-name', 'builtin.fs.read', '--tool-arg', 'path=notes.txt']);
    expectSuccess(read);
    expect(read.result?.isError).not.toBe(true);
    expect(read.result?.structuredContent).toMatchObject({ resource: 'work', content: 'first line\nsecond line\n' });
    expect(JSON.parse(textOf(read))).toEqual(read.result?.structuredContent);

    const echo = await inspect([], () => ['--method', 'tools/call', '--tool-name', 'mcp.everything.echo', '--tool-arg', 'message=through the gateway']);
    expectSuccess(echo);
    expect(textOf(echo)).toBe('Echo: through the gateway');
  }, 180_000);

  it('runs a writer in the default profile, and the read-only profile refuses it with a clear error', async () => {
    const written = await inspect([], () => [
      '--method',
      'tools/call',
      '--tool-name',
      'builtin.fs.write',
      '--tool-args-json',
      JSON.stringify({ path: 'written.txt', content: 'allowed' }),
    ]);
    expectSuccess(written);
    expect(readFileSync(join(work, 'written.txt'), 'utf8')).toBe('allowed');

    // Not offered: the inspector finds no such tool on the server.
    const notListed = await inspect(['--profile', 'read-only'], () => [
      '--method',
      'tools/call',
      '--tool-name',
      'builtin.fs.write',
      '--tool-args-json',
      JSON.stringify({ path: 'refused.txt', content: 'x' }),
    ]);
    expect(notListed.run.exitCode).not.toBe(0);
    expect(notListed.error?.code).toBe('tool_not_found');
    expect(notListed.leftovers).toEqual([]);

    // Called anyway (the search mode's tools.call takes any name): the gateway refuses it before it runs.
    const refused = await inspect(['--profile', 'read-only', '--search'], () => [
      '--method',
      'tools/call',
      '--tool-name',
      'tools.call',
      '--tool-args-json',
      JSON.stringify({ name: 'builtin.fs.write', arguments: { path: 'refused.txt', content: 'x' } }),
    ]);
    expect(refused.leftovers).toEqual([]);
    expect(refused.result?.isError).toBe(true);
    expect(textOf(refused)).toMatch(/TOOL_ACCESS_DENIED.*'builtin\.fs\.write'.*read-only/);
    expect(existsSync(join(work, 'refused.txt'))).toBe(false);
  }, 240_000);

  it('a call that needs approval is denied, saying what would let it run, since the inspector CLI declares no elicitation; --approve lets it run', async () => {
    writeFileSync(join(work, 'old.txt'), 'old');
    const denied = await inspect([], () => ['--method', 'tools/call', '--tool-name', 'builtin.fs.delete', '--tool-arg', 'path=old.txt']);
    expect(denied.leftovers).toEqual([]);
    expect(denied.result?.isError).toBe(true);
    expect(textOf(denied)).toMatch(/TOOL_APPROVAL_DENIED.*declares no elicitation.*--approve/s);
    expect(existsSync(join(work, 'old.txt'))).toBe(true);

    const approved = await inspect(['--approve', 'builtin.fs.delete'], () => [
      '--method',
      'tools/call',
      '--tool-name',
      'builtin.fs.delete',
      '--tool-arg',
      'path=old.txt',
    ]);
    expectSuccess(approved);
    expect(approved.result?.structuredContent).toMatchObject({ deleted: 1 });
    expect(existsSync(join(work, 'old.txt'))).toBe(false);
  }, 240_000);

  it('a client that goes away mid-call (the inspector interrupted) ends the call, the gateway and the server behind it', async () => {
    const started = join(work, 'started');
    let seenWhileRunning: number[] = [];
    let interrupted: Promise<void> = Promise.resolve();
    const gone = await inspect(
      [],
      (mark) => [
        '--method',
        'tools/call',
        '--tool-name',
        'builtin.command.run',
        '--tool-args-json',
        JSON.stringify({ command: ['sh', '-c', 'touch started; exec sleep 120'], env: { [MARK_VARIABLE]: mark } }),
      ],
      (inspectorPid, mark) => {
        interrupted = (async () => {
          // A hang guard: the command says it started by the file it made.
          for (let attempt = 0; attempt < 600 && !existsSync(started); attempt += 1) await new Promise((resolve) => setTimeout(resolve, 100));
          seenWhileRunning = markedProcesses(mark);
          try {
            process.kill(inspectorPid, 'SIGINT');
          } catch {
            // It ended on its own: the assertions below say why.
          }
        })();
      },
    );
    await interrupted;
    expect(existsSync(started)).toBe(true);
    // The gateway, server-everything and the command's sleep were running when the client went away.
    expect(seenWhileRunning.length).toBeGreaterThanOrEqual(3);
    expect(gone.run.exitCode === 0).toBe(false);
    expect(gone.leftovers).toEqual([]);
  }, 240_000);
});

describe('MCP Inspector CLI over Streamable HTTP through a replica set (3 agents mcp serve --http --fleet behind a round-robin proxy)', () => {
  const replicas: ChildProcess[] = [];
  let proxy: { url: URL; counts: number[]; close(): Promise<void> } | undefined;

  beforeAll(async () => {
    const config = join(folder, 'fleet.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        builtin: { tools: ['builtin.fs.read', 'builtin.fs.list'] },
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_STDIO], scope: 'shared' } },
      }),
    );
    const key = randomBytes(32).toString('hex');
    const origins: string[] = [];
    for (let index = 0; index < 3; index++) {
      const child = spawn(
        process.execPath,
        [CLI_BIN, '-c', config, 'mcp', 'serve', '--http', '127.0.0.1:0', '--fleet', '--replica-id', `r${index}`, '--resource', `work=${work}:read`],
        {
          cwd: folder,
          env: { PATH: process.env['PATH'] ?? '', HOME: join(folder, 'home'), AGENTS_STATE_DIR: join(folder, `fleet-state-${index}`), AGENTS_FLEET_KEY: key },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      replicas.push(child);
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const look = (chunk: Buffer): void => {
          output += chunk.toString();
          const match = /Serving MCP at (\S+)/.exec(output);
          if (match !== null) resolve(match[1] as string);
        };
        child.stdout?.on('data', look);
        child.stderr?.on('data', look);
        child.once('exit', (code) => reject(new Error(`replica r${index} exited (${code}):\n${output}`)));
      });
      origins.push(new URL(url).origin);
    }
    proxy = await startRoundRobinProxy(origins);
  }, 300_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(
      replicas.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGTERM');
          }),
      ),
    );
  });

  async function inspectHttp(args: readonly string[]): Promise<{ run: RunnerOutput; result?: InspectorResult['result'] }> {
    const run = await runWithNode22([INSPECTOR_CLI, '--cli', '--format', 'json', '--quiet', new URL('/mcp', proxy?.url).href, '--transport', 'http', ...args], {
      timeoutMs: 90_000,
      env: { PATH: process.env['PATH'] ?? '', HOME: join(folder, 'home') },
    });
    try {
      return { run, result: (JSON.parse(run.stdout) as { result?: InspectorResult['result'] }).result };
    } catch {
      return { run };
    }
  }

  it('lists and calls tools, built-in and upstream, each run a session served by the replicas in turn', async () => {
    const listed = await inspectHttp(['--method', 'tools/list']);
    expect({ exit: listed.run.exitCode, stderr: listed.run.exitCode === 0 ? '' : listed.run.stderr }).toEqual({ exit: 0, stderr: '' });
    expect((listed.result?.tools ?? []).map((tool) => tool.name)).toEqual(expect.arrayContaining(['builtin.fs.read', 'mcp.everything.echo']));
    for (const message of ['one', 'two', 'three']) {
      const echo = await inspectHttp(['--method', 'tools/call', '--tool-name', 'mcp.everything.echo', '--tool-arg', `message=${message}`]);
      expect({ exit: echo.run.exitCode, stderr: echo.run.exitCode === 0 ? '' : echo.run.stderr }).toEqual({ exit: 0, stderr: '' });
      expect((echo.result?.content ?? []).map((block) => block.text).join('')).toBe(`Echo: ${message}`);
    }
    const read = await inspectHttp(['--method', 'tools/call', '--tool-name', 'builtin.fs.read', '--tool-arg', 'path=notes.txt']);
    expect(read.result?.structuredContent).toMatchObject({ content: 'first line\nsecond line\n' });
    // No affinity: every replica answered some of the requests.
    expect(proxy?.counts.every((count) => count > 0)).toBe(true);
  }, 300_000);
});
