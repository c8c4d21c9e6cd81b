import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { isProcessAlive } from '@ca/sandbox/testing';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, ElicitRequestSchema, type ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { fixtures, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';

// `agents mcp serve` as MCP clients run it: the built binary as a child
// process (the test target depends on the build), a real SDK client on its
// stdio or its Streamable HTTP endpoint, real upstream servers
// (server-everything, and a hostile one) started by the gateway.
const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');
const serveFixtures = path.join(fixtures, 'serve');

jest.setTimeout(120_000);
// Every served session is closed after its test, passed or failed: a test that
// fails before its own close() would otherwise leave the gateway running and
// Jest waiting on its pipes.
const openClients: Client[] = [];
const stopAfterTest: (() => void)[] = [];
afterEach(async () => {
  for (const client of openClients.splice(0)) await client.close().catch(() => undefined);
  for (const stop of stopAfterTest.splice(0)) stop();
  removeTemporaryFolders();
});

interface Served {
  readonly client: Client;
  readonly stderr: () => string;
  readonly workspace: string;
  readonly stateDir: string;
  readonly env: Record<string, string>;
  readonly hostilePids: () => number[];
}

function environment(): { env: Record<string, string>; workspace: string; stateDir: string; pidsFile: string } {
  const workspace = temporaryFolder();
  const stateDir = temporaryFolder('ca-cli-state-');
  const pidsFile = path.join(stateDir, 'hostile-pids');
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    TEST_WORKSPACE: workspace,
    TEST_FIXTURES: fixtures,
    TEST_HOSTILE_PIDS: pidsFile,
    AGENTS_STATE_DIR: stateDir,
  };
  return { env, workspace, stateDir, pidsFile };
}

async function serveStdio(args: readonly string[], capabilities: ClientCapabilities = {}): Promise<Served> {
  const { env, workspace, stateDir, pidsFile } = environment();
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', 'serve', ...args], cwd: serveFixtures, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const client = new Client({ name: 'serve-test', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  openClients.push(client);
  const hostilePids = () => (fs.existsSync(pidsFile) ? fs.readFileSync(pidsFile, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);
  return { client, stderr: () => stderr, workspace, stateDir, env, hostilePids };
}

const text = (result: unknown): string =>
  (((result as { content?: unknown }).content as { type: string; text?: string }[] | undefined) ?? [])
    .map((block) => block.text ?? `[${block.type}]`)
    .join('\n');

function agents(args: readonly string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [bin, ...args], { cwd: serveFixtures, env, encoding: 'utf8' });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('agents mcp serve (stdio)', () => {
  it("serves every source's tools, upstream resources and prompts, progress, a client's cancellation, and announces its plan", async () => {
    const traceFolder = temporaryFolder('ca-cli-traces-');
    const served = await serveStdio(['--plan-id', 'serve-stdio', '--traces', path.join(traceFolder, 'traces.jsonl')]);
    const { client } = served;
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['builtin.fs.read', 'builtin.fs.write', 'mcp.everything.echo', 'mcp.everything.get-sum', 'mcp.hostile.echo']));
    expect(names.some((name) => name.includes('.resources.') || name.includes('.prompts.'))).toBe(false);
    expect(text(await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'through the gateway' } }))).toBe('Echo: through the gateway');
    // Upstream resources and prompts, passed through.
    const { resources } = await client.listResources();
    expect(resources.length).toBeGreaterThan(0);
    const read = await client.readResource({ uri: resources[0]?.uri as string });
    expect(read.contents[0]?.uri).toBe(resources[0]?.uri);
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toContain('everything.simple-prompt');
    // Progress, then a cancellation that leaves the session working.
    const progress: unknown[] = [];
    const long = await client.callTool({ name: 'mcp.everything.trigger-long-running-operation', arguments: { duration: 1, steps: 3 } }, CallToolResultSchema, {
      onprogress: (update) => progress.push(update),
    });
    expect(text(long)).toMatch(/Long running operation completed/);
    // server-everything's last step can cross its own result (a client of it directly may miss it too): the steps before it come, in order.
    expect(progress.slice(0, 2)).toEqual([
      { progress: 1, total: 3 },
      { progress: 2, total: 3 },
    ]);
    expect(progress.slice(2)).toEqual(progress.length === 3 ? [{ progress: 3, total: 3 }] : []);
    const controller = new AbortController();
    const cancelled = client.callTool({ name: 'mcp.everything.trigger-long-running-operation', arguments: { duration: 60, steps: 60 } }, CallToolResultSchema, {
      signal: controller.signal,
      onprogress: () => controller.abort('the person pressed stop'),
    });
    await expect(cancelled).rejects.toThrow();
    expect(text(await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'still here' } }))).toBe('Echo: still here');
    // The session is a plan of the registry.
    const list = agents(['plan', 'list', '--json'], served.env);
    const plans = JSON.parse(list.stdout) as { planId: string; labels: Record<string, string> }[];
    expect(plans).toEqual([
      expect.objectContaining({ planId: 'serve-stdio', labels: { server: 'mcp', transport: 'stdio', client: 'serve-test 1.0.0', profile: 'read-write' } }),
    ]);
    await client.close();
    const traces = fs
      .readFileSync(path.join(traceFolder, 'traces.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { toolName: string; planId: string; success: boolean; error?: { code: string } });
    expect(traces.every((trace) => trace.planId === 'serve-stdio')).toBe(true);
    expect(traces.map((trace) => trace.toolName)).toEqual(expect.arrayContaining(['mcp.everything.echo', 'mcp.everything.resources.read']));
    expect(traces.find((trace) => trace.error?.code === 'TOOL_CANCELLED')?.toolName).toBe('mcp.everything.trigger-long-running-operation');
  });

  it("answers completion/complete with the upstream server's own suggestions, for a prompt argument and a resource template variable", async () => {
    const traceFolder = temporaryFolder('ca-cli-traces-');
    const { client } = await serveStdio(['--plan-id', 'serve-complete', '--traces', path.join(traceFolder, 'traces.jsonl')]);
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const prompt = { type: 'ref/prompt' as const, name: 'everything.completable-prompt' };
    expect((await client.complete({ ref: prompt, argument: { name: 'department', value: 'S' } })).completion.values).toEqual(['Sales', 'Support']);
    // The arguments already chosen reach the server, which narrows by them.
    const lead = await client.complete({ ref: prompt, argument: { name: 'name', value: '' }, context: { arguments: { department: 'Marketing' } } });
    expect(lead.completion.values).toEqual(['Grace', 'Henry', 'Iris']);
    const { resourceTemplates } = await client.listResourceTemplates();
    const template = resourceTemplates.find((item) => item.uriTemplate === 'demo://resource/dynamic/text/{resourceId}');
    expect(template).toBeDefined();
    const variable = await client.complete({ ref: { type: 'ref/resource', uri: template!.uriTemplate }, argument: { name: 'resourceId', value: '42' } });
    expect(variable.completion.values).toEqual(['42']);
    // A prompt the upstream server does not know is its error, passed on with the method.
    await expect(client.complete({ ref: { type: 'ref/prompt', name: 'everything.no-such-prompt' }, argument: { name: 'x', value: '' } })).rejects.toThrow(
      /completion\/complete failed upstream.*no-such-prompt/,
    );
    await client.close();
    const traces = fs
      .readFileSync(path.join(traceFolder, 'traces.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { toolName: string; success: boolean });
    expect(traces.filter((trace) => trace.toolName === 'mcp.everything.completion.complete').map((trace) => trace.success)).toEqual([true, true, true, false]);
  });

  it('a read-only profile refuses a writer before it runs; its tools are only those the profile names', async () => {
    const { client, workspace } = await serveStdio(['--profile', 'review']);
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('builtin.fs.read');
    expect(names).not.toContain('builtin.fs.write');
    expect(names.some((name) => name.startsWith('mcp.hostile.'))).toBe(false);
    const refused = await client.callTool({ name: 'builtin.fs.write', arguments: { resource: 'work', path: 'note.md', content: 'no' } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^Error TOOL_ACCESS_DENIED: 'builtin.fs.write' changes things and this plan is read-only/);
    expect(fs.existsSync(path.join(workspace, 'note.md'))).toBe(false);
    await client.close();
  });

  it('asks the client to approve a write through elicitation; without elicitation, --approve decides', async () => {
    const asking = await serveStdio(['--profile', 'careful'], { elicitation: { form: {} } });
    const questions: string[] = [];
    asking.client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { answer: questions.length === 1 ? 'once' : 'deny' } };
    });
    const write = (content: string) => asking.client.callTool({ name: 'builtin.fs.write', arguments: { resource: 'work', path: 'note.md', content } });
    expect((await write('approved')).isError).toBeFalsy();
    expect(fs.readFileSync(path.join(asking.workspace, 'note.md'), 'utf8')).toBe('approved');
    expect(questions[0]).toMatch(/Tool builtin\.fs\.write \(builtin\): writes.*Arguments: \{"resource":"work","path":"note\.md","content":"approved"\}/s);
    expect(text(await write('denied'))).toMatch(/^Error TOOL_APPROVAL_DENIED: a person denied this call/);
    expect(fs.readFileSync(path.join(asking.workspace, 'note.md'), 'utf8')).toBe('approved');
    await asking.client.close();

    const mute = await serveStdio(['--profile', 'careful', '--approve', 'builtin.fs.write']);
    expect((await mute.client.callTool({ name: 'builtin.fs.write', arguments: { resource: 'work', path: 'n.md', content: 'ok' } })).isError).toBeFalsy();
    expect(fs.readFileSync(path.join(mute.workspace, 'n.md'), 'utf8')).toBe('ok');
    await mute.client.close();
  });

  it('survives a hostile upstream: a catastrophic pattern, outputs of 4 and 8 MB and a server that dies mid-call get clear errors, the other tools go on', async () => {
    const { client, hostilePids } = await serveStdio(['--plan-id', 'hostile']);
    const tools = (await client.listTools()).tools;
    // The client never gets a pattern its own validator could hang on.
    expect(tools.find((tool) => tool.name === 'mcp.hostile.catastrophic')?.outputSchema).toBeUndefined();
    const attack = await client.callTool({ name: 'mcp.hostile.catastrophic', arguments: { code: `${'a'.repeat(64)}!` } });
    expect(text(attack)).toMatch(/^Error TOOL_SCHEMA_VALIDATION_FAILED/);
    const answered = await client.callTool({ name: 'mcp.hostile.catastrophic', arguments: { code: 'aaa' } });
    expect(answered.structuredContent).toEqual({ code: `${'a'.repeat(64)}!` });
    // 8 Mi characters of text is more than
    // the output guardrail, on by default, scans: withheld with the reason, never
    // passed on unscanned.
    const hugeText = await client.callTool({ name: 'mcp.hostile.huge-text', arguments: {} });
    expect(hugeText.isError).toBe(true);
    expect(text(hugeText).length).toBeLessThan(101_000);
    expect(text(hugeText)).toMatch(/withheld by hook 'secret-redaction'.*characters long/s);
    const hugeStructured = await client.callTool({ name: 'mcp.hostile.huge-structured', arguments: {} });
    expect(hugeStructured.isError).toBe(true);
    expect(text(hugeStructured)).toMatch(/GATEWAY_OUTPUT_UNFIT.*larger than the gateway passes on/s);
    const died = await client.callTool({ name: 'mcp.hostile.die', arguments: {} });
    expect(died.isError).toBe(true);
    expect(text(died)).toMatch(/^Error MCP_SERVER_EXITED|exited|closed/);
    expect(text(await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'fine' } }))).toBe('Echo: fine');
    expect(text(await client.callTool({ name: 'builtin.fs.list', arguments: { resource: 'work' } }))).toMatch(/entries/);
    await client.close();
    await waitFor(() => hostilePids().every((pid) => !isProcessAlive(pid)), 'no hostile server to be left');
  });

  it('--code-mode lists code.run and tools.search; a program calls the profile’s tools in the session’s plan, its write asked of the client as the inner call', async () => {
    const { client, workspace } = await serveStdio(['--profile', 'careful', '--code-mode'], { elicitation: { form: {} } });
    const questions: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push((request.params as { message: string }).message);
      return { action: 'accept', content: { answer: 'once' } };
    });
    const listed = (await client.listTools()).tools;
    expect(listed.map((tool) => tool.name).sort()).toEqual(['code.run', 'tools.search']);
    // The declarations name what a program of this profile may call: its builtin.fs tools, nothing of the MCP servers.
    const described = listed.find((tool) => tool.name === 'code.run')?.description ?? '';
    expect(described).toContain('builtin_fs_write(');
    expect(described).not.toContain('mcp_everything');
    fs.writeFileSync(path.join(workspace, 'a.md'), 'alpha');
    const code = [
      "await tools.builtin_fs_write({ resource: 'work', path: 'b.md', content: 'beta' });",
      "const listing = await tools.builtin_fs_list({ resource: 'work', path: '.' });",
      "const back = await tools.builtin_fs_read({ resource: 'work', path: 'b.md' });",
      'let refused;',
      "try { await tools.mcp_everything_echo({ message: 'hi' }); } catch (error) { refused = error.message; }",
      'return { files: listing.entries.map((entry) => entry.name).sort(), back: back.content, refused };',
    ].join('\n');
    const result = await client.callTool({ name: 'code.run', arguments: { code } });
    expect(result.isError).toBeFalsy();
    const output = (result.structuredContent ?? JSON.parse(text(result))) as { result: { files: string[]; back: string; refused: string } };
    expect(output.result.files).toEqual(['a.md', 'b.md']);
    expect(output.result.back).toBe('beta');
    // A tool outside the profile is not in the program's API at all.
    expect(output.result.refused).toMatch(/not a function/);
    expect(fs.readFileSync(path.join(workspace, 'b.md'), 'utf8')).toBe('beta');
    // The person was asked about the inner call itself, not about the program.
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatch(/Tool builtin\.fs\.write \(builtin\): writes.*Arguments: \{"resource":"work","path":"b\.md","content":"beta"\}/s);
    await client.close();
  });

  it("agents plan cancel ends the session's plan and the command: the client sees the server go, no upstream server is left", async () => {
    const { client, env, hostilePids } = await serveStdio(['--plan-id', 'to-cancel']);
    let closed = false;
    client.onclose = () => (closed = true);
    expect(text(await client.callTool({ name: 'mcp.hostile.echo', arguments: { text: 'up' } }))).toBe('up');
    const cancel = agents(['plan', 'cancel', 'to-cancel'], env);
    expect(cancel).toMatchObject({ status: 0, stdout: 'Cancellation of plan to-cancel requested.\n' });
    await waitFor(() => closed, 'the server to close the session');
    await waitFor(() => hostilePids().length > 0 && hostilePids().every((pid) => !isProcessAlive(pid)), 'the upstream servers to be stopped');
    expect(JSON.parse(agents(['plan', 'list', '--json'], env).stdout)).toEqual([]);
  });
});

describe('agents mcp serve --http', () => {
  it('serves sessions on 127.0.0.1, each a plan of the registry, refuses another Host, and stops on SIGTERM', async () => {
    const { env } = environment();
    const child = spawn(process.execPath, [bin, 'mcp', 'serve', '--http', '127.0.0.1:0', '--profile', 'review'], {
      cwd: serveFixtures,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitFor(() => /Serving MCP at (\S+)/.test(output), 'the server to say where it serves');
    const url = new URL((/Serving MCP at (\S+)/.exec(output) as RegExpExecArray)[1] as string);
    expect(url.hostname).toBe('127.0.0.1');
    const clients = await Promise.all(
      [1, 2].map(async (index) => {
        const client = new Client({ name: `http-${index}`, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(url));
        return client;
      }),
    );
    for (const client of clients) {
      expect(text(await client.callTool({ name: 'builtin.fs.list', arguments: { resource: 'work' } }))).toMatch(/entries/);
      // The profile is read-only: a server tool that does not say it only reads is refused.
      expect(text(await client.callTool({ name: 'mcp.everything.echo', arguments: { message: 'hi' } }))).toMatch(/^Error TOOL_ACCESS_DENIED: .*read-only/);
    }
    const plans = JSON.parse(agents(['plan', 'list', '--json'], env).stdout) as { planId: string; labels: Record<string, string> }[];
    expect(plans.map((plan) => plan.labels['client']).sort()).toEqual(['http-1 1.0.0', 'http-2 1.0.0']);
    expect(plans.every((plan) => /^mcp-[0-9a-f-]{36}$/.test(plan.planId) && plan.labels['transport'] === 'http')).toBe(true);
    const rebinding = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { host: 'evil.example.com', 'content-type': 'application/json' } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(rebinding).toBe(403);
    for (const client of clients) await client.close();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(JSON.parse(agents(['plan', 'list', '--json'], env).stdout)).toEqual([]);
  });

  it("takes the limits of serve.http: a client's requests a minute, told apart by the proxy's header", async () => {
    const { env, workspace } = environment();
    const config = path.join(workspace, 'limits.config.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ builtin: { tools: ['builtin.fs.list'] }, serve: { http: { requestsPerMinute: 2, maxSessionsPerClient: 4, clientHeader: 'x-client' } } }),
    );
    const child = spawn(process.execPath, [bin, 'mcp', 'serve', '-c', config, '--http', '127.0.0.1:0'], {
      cwd: workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      await waitFor(() => /Serving MCP at (\S+)/.test(output), 'the server to say where it serves');
      const url = new URL((/Serving MCP at (\S+)/.exec(output) as RegExpExecArray)[1] as string);
      const initialize = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      const post = (client: string) =>
        new Promise<{ status: number | undefined; body: string }>((resolve, reject) => {
          const req = httpRequest(
            url,
            { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-client': client } },
            (res) => {
              let body = '';
              res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
              res.on('end', () => resolve({ status: res.statusCode, body }));
            },
          );
          req.on('error', reject);
          req.end(initialize);
        });
      const statuses = [];
      for (let request = 0; request < 3; request++) statuses.push((await post('alice')).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect((await post('bob')).status).toBe(200);
      expect(JSON.parse((await post('alice')).body)).toMatchObject({ error: { data: { code: 'GATEWAY_RATE_LIMIT' } } });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('shares one upstream server among its sessions (scope shared by default), stopped with the command', async () => {
    const { env, stateDir } = environment();
    const starts = path.join(stateDir, 'starts');
    const child = spawn(process.execPath, [bin, 'mcp', 'serve', '--http', '127.0.0.1:0'], {
      cwd: serveFixtures,
      env: { ...env, TEST_STARTS: starts },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // A failed expectation must not leave the server running (Jest would wait for it).
    stopAfterTest.push(() => child.kill('SIGKILL'));
    await waitFor(() => /Serving MCP at (\S+)/.test(output), 'the server to say where it serves');
    const url = new URL((/Serving MCP at (\S+)/.exec(output) as RegExpExecArray)[1] as string);
    const clients = await Promise.all(
      [1, 2, 3].map(async (index) => {
        const client = new Client({ name: `shared-${index}`, version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(url));
        openClients.push(client);
        return client;
      }),
    );
    await Promise.all(
      clients.map(async (client, index) =>
        expect(text(await client.callTool({ name: 'mcp.everything.echo', arguments: { message: `session ${index}` } }))).toBe(`Echo: session ${index}`),
      ),
    );
    // The process that listed the tools at start serves every session; with scope plan each session would start its own.
    const pids = () => fs.readFileSync(starts, 'utf8').trim().split('\n').map(Number);
    expect(pids()).toHaveLength(1);
    for (const client of clients) await client.close();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await waitFor(() => pids().every((pid) => !isProcessAlive(pid)), 'the shared upstream server to be stopped');
  });

  it('refuses an address beyond loopback without allowed host names, saying how to serve', () => {
    const { env } = environment();
    const run = agents(['mcp', 'serve', '--http', '0.0.0.0:0'], env);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/GATEWAY_HTTP_UNSAFE: Serving MCP over HTTP on 0\.0\.0\.0 is refused: .*--allow-host/);
  });

  it('--code-mode does not combine with --search or --tools', () => {
    const { env } = environment();
    for (const extra of [['--search'], ['--tools', 'builtin.fs.*']]) {
      const run = agents(['mcp', 'serve', '--code-mode', ...extra], env);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/--code-mode offers code\.run and tools\.search in place of the tools; it does not combine with --(search|tools)/);
    }
  });

  it('refuses a profile that does not exist, naming those that do', () => {
    const { env } = environment();
    const run = agents(['mcp', 'serve', '--profile', 'reveiw'], env);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/There is no profile 'reveiw'. The profiles are: careful, checkpoint, read-only, read-write, review/);
  });
});
