import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { isProcessAlive } from '@ca/sandbox/testing';
import { captureIo, captureMcpIo, fixtures, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

// These run @modelcontextprotocol/server-everything as a real stdio server,
// through __fixtures__/counted-server.js, which records every start.
jest.setTimeout(90_000);
afterEach(() => removeTemporaryFolders());

function expectAllStopped(pids: readonly number[]): void {
  for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
}

describe('a command starts only the MCP servers it needs', () => {
  it('no server for a custom or a built-in tool', async () => {
    const custom = captureMcpIo();
    expect(await main(['tools', 'run', 'test.echo', '--input', '{"text":"hi"}'], custom)).toBe(EXIT_CODES.ok);
    expect(custom.out()).toBe('{\n  "text": "hi"\n}\n');
    expect(custom.starts()).toEqual([]);
    const builtin = captureMcpIo();
    expect(await main(['tools', 'run', 'builtin.fs.write', '--input', '{"resource":"work","path":"a.txt","content":"x"}'], builtin)).toBe(EXIT_CODES.ok);
    expect(builtin.starts()).toEqual([]);
    const check = captureMcpIo();
    writeFixture(check.workspace, 'plan.yaml', 'steps:\n  - { tool: test.echo, input: { text: x } }\n');
    expect(await main(['plan', 'check', path.join(check.workspace, 'plan.yaml')], check)).toBe(EXIT_CODES.ok);
    expect(check.starts()).toEqual([]);
  });

  it('one start for an MCP tool: the discovery session serves the plan, and nothing is left running', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.get-sum', '--input', '{"a":19,"b":23}'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toBe('The sum of 19 and 23 is 42.\n');
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());

    const wrapped = captureMcpIo();
    expect(await main(['tools', 'run', 'test.sum', '--input', '{"a":1,"b":2}'], wrapped)).toBe(EXIT_CODES.ok);
    expect(wrapped.out()).toBe('The sum of 1 and 2 is 3.\n');
    expect(wrapped.starts()).toHaveLength(1);
    expectAllStopped(wrapped.starts());
  });

  it('tools list starts the configured server once', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'list'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toMatch(/^mcp\.everything\.get-sum\s+mcp/m);
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());
  });

  it('suggests an MCP tool for a name no source offers (looking at every source)', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'get-summ'], io)).toBe(EXIT_CODES.notFound);
    expect(io.err()).toBe(
      "TOOL_NOT_FOUND: No configured source offers a tool named 'get-summ'. Did you mean 'mcp.everything.get-sum'? Run 'agents tools list' to see every tool.\n",
    );
    expectAllStopped(io.starts());
  });
});

describe('progress off a terminal', () => {
  it('plan run prints a line when each step starts and ends, with its duration, and the MCP progress in between', async () => {
    const io = captureMcpIo();
    expect(await main(['--state-dir', temporaryFolder(), 'plan', 'run', 'progress-plan.yaml'], io)).toBe(EXIT_CODES.ok);
    const lines = io.out().split('\n');
    const long = lines.filter((line) => line.startsWith('[1/2] long mcp.everything.trigger-long-running-operation … '));
    expect(long[0]).toBe('[1/2] long mcp.everything.trigger-long-running-operation … started');
    expect(long[1]).toMatch(/… progress 1\/3 \(\d+ ms\)$/);
    expect(long[long.length - 1]).toMatch(/… ok \(1\.\d s\) "Long running operation completed\. Duration: 1\.5 seconds, Steps: 3\."$/);
    expect(lines.indexOf('[2/2] sum mcp.everything.get-sum … started')).toBeGreaterThan(lines.indexOf(long[long.length - 1] as string));
    expect(io.out()).toMatch(/\[2\/2\] sum mcp\.everything\.get-sum … ok \(\d+ ms\) "The sum of 19 and 23 is 42\."/);
    // One server for the whole command: discovery, the check and both steps.
    expect(io.starts()).toHaveLength(1);
    expectAllStopped(io.starts());
  });

  it('tools run writes progress lines on stderr and the output alone on stdout', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.trigger-long-running-operation', '--input', '{"duration":1,"steps":2}'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toBe('Long running operation completed. Duration: 1 seconds, Steps: 2.\n');
    expect(io.err()).toMatch(/^mcp\.everything\.trigger-long-running-operation: progress 1\/2 \(\d+ ms\)$/m);
  });
});

describe('an MCP server that fails', () => {
  function brokenConfig(extra: Record<string, unknown> = {}): string {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        builtin: true,
        mcpServers: { broken: { command: process.execPath, args: ['-e', "process.stderr.write('missing API key\\n'); process.exit(3)"] } },
        ...extra,
      }),
    );
    return folder;
  }

  it('to start: its error is printed once, and a command that needs it exits 4 with the code', async () => {
    const folder = brokenConfig();
    const run = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.broken.echo'], run)).toBe(EXIT_CODES.notFound);
    expect(run.err()).toMatch(
      /^MCP_SERVER_START_FAILED: Tool 'mcp\.broken\.echo' is unavailable: MCP server 'broken' could not be started \(.*\): it exited with code 3 before completing the MCP handshake\. Its stderr ended with:\nmissing API key\n/,
    );
    expect(run.err().match(/could not be started/g)).toHaveLength(1);
    expect(run.err()).toContain('of mcpServers.broken in agents.config.json.');

    const list = captureIo({}, folder);
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.failed);
    expect(list.err().match(/could not be started/g)).toHaveLength(1);
    expect(list.out()).toMatch(/^builtin\.fs\.read\s+builtin/m);

    // A command that does not need the server does not start it, and succeeds.
    const other = captureIo({}, folder);
    expect(await main(['tools', 'describe', 'builtin.fs.read'], other)).toBe(EXIT_CODES.ok);
    expect(other.err()).toBe('');
  });

  it('to answer in time: the advice names the key of the configuration', async () => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        mcpServers: {
          everything: { command: process.execPath, args: [path.join(fixtures, 'counted-server.js')], callTimeoutMs: 300, resetTimeoutOnProgress: false },
        },
      }),
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.everything.trigger-long-running-operation', '--input', '{"duration":3,"steps":1}'], io)).toBe(EXIT_CODES.failed);
    // The server announces new tools after the handshake; on a loaded machine listing them again within the same 300 ms may time out, which is only a warning.
    const relisting = /^warning: MCP server 'everything' changed what it offers, but it could not be listed again: .*\n/gm;
    expect(io.err().replace(relisting, '')).toMatch(
      /^MCP_CALL_TIMEOUT: .*did not answer within callTimeoutMs \(300 ms\) and was cancelled\. Raise mcpServers\.everything\.callTimeoutMs in agents\.config\.json if the tool needs longer\.\n$/,
    );
  });
});

/** A person at the terminal: what they type, fed to the command's stdin. */
function withTerminal<T extends object>(io: T): T & { terminalInput: PassThrough; type: (text: string) => void } {
  const terminalInput = new PassThrough();
  return Object.assign(io, { terminalInput, type: (text: string) => void terminalInput.write(text) });
}

describe('agents mcp resources|prompts <server>', () => {
  it('lists the resources and templates, and reads one, in a read-only plan', async () => {
    const list = captureMcpIo();
    expect(await main(['mcp', 'resources', 'everything'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(/^demo:\/\/resource\/static\/document\/features\.md\s+features\.md\s+text\/markdown/m);
    expect(list.out()).toMatch(/^demo:\/\/resource\/dynamic\/text\/\{resourceId\}/m);
    expect(list.out()).toMatch(/\d+ resource\(s\), 2 template\(s\)\./);
    const read = captureMcpIo();
    expect(await main(['mcp', 'resources', 'everything', '--read', 'demo://resource/static/document/features.md'], read)).toBe(EXIT_CODES.ok);
    expect(read.out()).toMatch(/^# Everything Server - Features/);
    const json = captureMcpIo();
    expect(await main(['mcp', 'resources', 'everything', '--read', 'demo://resource/dynamic/text/7', '--json'], json)).toBe(EXIT_CODES.ok);
    expect(JSON.parse(json.out())).toEqual({ contents: [expect.objectContaining({ uri: 'demo://resource/dynamic/text/7', text: expect.any(String) })] });
    expectAllStopped([...list.starts(), ...read.starts(), ...json.starts()]);
  });

  it('a resource the server does not have fails with its code, exit 1', async () => {
    const io = captureMcpIo();
    expect(await main(['mcp', 'resources', 'everything', '--read', 'demo://nothing/here'], io)).toBe(EXIT_CODES.failed);
    expect(io.err()).toMatch(/^MCP_REQUEST_FAILED: Tool 'mcp\.everything\.resources\.read' \(MCP method 'resources\/read' of server 'everything'\)/);
  });

  it('lists the prompts and gets one with its arguments', async () => {
    const list = captureMcpIo();
    expect(await main(['mcp', 'prompts', 'everything'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(/^args-prompt\s+city, state\?\s+A prompt with two arguments/m);
    const get = captureMcpIo();
    expect(await main(['mcp', 'prompts', 'everything', '--get', 'args-prompt', '--arg', 'city=Lyon', '--arg', 'state=Rhône'], get)).toBe(EXIT_CODES.ok);
    expect(get.out()).toBe("user: What's weather in Lyon, Rhône?\n");
  });

  it('a server that is not configured: the names that are, exit 4', async () => {
    const io = captureMcpIo();
    expect(await main(['mcp', 'prompts', 'elsewhere'], io)).toBe(EXIT_CODES.notFound);
    expect(io.err()).toMatch(/^TOOL_NOT_FOUND: .*No MCP server 'elsewhere' is configured in agents\.config\.json \(its servers: everything\)/);
  });
});

describe('MCP protocol features through the command', () => {
  it('a task-based tool runs, with its status as progress lines, and no tool is unavailable', async () => {
    const list = captureMcpIo();
    expect(await main(['tools', 'list'], list)).toBe(EXIT_CODES.ok);
    expect(list.out()).toMatch(/^mcp\.everything\.simulate-research-query\s+mcp/m);
    expect(list.err()).not.toMatch(/unavailable/);
    const run = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.simulate-research-query', '--input', '{"topic":"tides"}'], run)).toBe(EXIT_CODES.ok);
    expect(run.out()).toMatch(/^# Research Report: tides/);
    expect(run.err()).toMatch(/^mcp\.everything\.simulate-research-query: progress 1 working: Gathering sources\.\.\. \(\d+ ms\)$/m);
    expect(run.err()).toMatch(/progress \d+ completed/);
  });

  it('elicitation without a terminal is declined, and the decline is reported', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'run', 'mcp.everything.trigger-elicitation-request'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toMatch(/User declined to provide the requested information/);
    expect(io.err()).toMatch(
      /^warning: MCP server 'everything' \(tool 'mcp\.everything\.trigger-elicitation-request'\) asked a question \(a form\); it was declined: there is no terminal to ask on\./m,
    );
  });

  it('elicitation on a terminal asks field by field, and the server gets the answers', async () => {
    const io = withTerminal(captureMcpIo());
    // Yes, a name, then the defaults (empty lines) for every other field.
    io.type(`y\nGrace Hopper\n${'\n'.repeat(14)}`);
    expect(await main(['tools', 'run', 'mcp.everything.trigger-elicitation-request'], io)).toBe(EXIT_CODES.ok);
    expect(io.err()).toMatch(/MCP server 'everything' \(tool 'mcp\.everything\.trigger-elicitation-request'\) asks: Please provide inputs/);
    expect(io.err()).toMatch(/String: Your full, legal name/);
    expect(io.out()).toMatch(/User provided the requested information/);
    expect(io.out()).toMatch(/Name: Grace Hopper/);
    expect(io.out()).toMatch(/Favorite Integer: 42/);
  });
});

describe('one terminal for every question', () => {
  it("a tool call to approve and the MCP server's form it then sends are asked on the same terminal, one after the other", async () => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [path.join(fixtures, 'counted-server.js')], cwd: path.join(fixtures, 'with-mcp') } },
        approval: { policy: { always: true } },
      }),
    );
    const io = withTerminal(captureIo({}, folder));
    const done = main(['--state-dir', path.join(folder, 'state'), 'tools', 'run', 'mcp.everything.trigger-elicitation-request', '--json'], io);
    const waitFor = async (text: string) => {
      for (let waited = 0; !io.err().includes(text); waited += 20) {
        if (waited > 30_000) throw new Error(`never asked: ${text}\n${io.err()}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    await waitFor('Approve?');
    expect(io.err()).toContain('tool       mcp.everything.trigger-elicitation-request (mcp)');
    expect(io.err()).not.toContain('asks: Please provide inputs');
    io.type('y\n');
    await waitFor('Answer it?');
    // The server's question comes after the approval, on the same terminal.
    expect(io.err().indexOf('asks: Please provide inputs')).toBeGreaterThan(io.err().indexOf('Approve?'));
    io.type(`y\nGrace Hopper\n${'\n'.repeat(14)}`);
    expect(await done).toBe(EXIT_CODES.ok);
    const result = JSON.parse(io.out()) as { output: unknown; trace: { approval?: unknown } };
    expect(result.trace.approval).toMatchObject({ decision: 'approved', scope: 'once', decidedBy: expect.stringMatching(/ \(terminal\)$/) });
    expect(JSON.stringify(result.output)).toContain('Grace Hopper');
  });
});

/** The service client's secret: it lives in an environment variable, never in a file of the command. */
const SERVICE_SECRET = 'service-secret-from-the-environment';

describe('agents mcp login|logout <server> (OAuth)', () => {
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    server = spawn(process.execPath, [path.join(fixtures, 'oauth-server.js')], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, FIXTURE_CLIENT_ID: 'reports', FIXTURE_CLIENT_SECRET: SERVICE_SECRET },
    });
    url = await new Promise<string>((resolve, reject) => {
      let text = '';
      server.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
        const port = /FIXTURE_LISTENING (\d+)/.exec(text)?.[1];
        if (port !== undefined) resolve(`http://127.0.0.1:${port}/mcp`);
      });
      server.once('error', reject);
    });
  });

  afterAll(() => {
    server.kill('SIGKILL');
  });

  it('signs in on a terminal, keeps the tokens in a file only the user can read, uses them, and forgets them', async () => {
    const folder = temporaryFolder();
    const state = path.join(folder, 'state');
    writeFixture(folder, 'agents.config.json', JSON.stringify({ mcpServers: { secured: { url, oauth: true } } }));
    const login = withTerminal(captureIo({}, folder));
    const signingIn = main(['--state-dir', state, 'mcp', 'login', 'secured'], login);
    // The person opens the printed page; the authorization server sends the browser back to the command.
    let page: string | undefined;
    for (let waited = 0; page === undefined && waited < 20_000; waited += 50) {
      page = /open this page in a browser.*:\n {2}(\S+)/.exec(login.err())?.[1];
      if (page === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(page).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    const redirect = await fetch(page as string, { redirect: 'manual' });
    await (await fetch(redirect.headers.get('location') as string)).text();
    expect(await signingIn).toBe(EXIT_CODES.ok);
    expect(login.out()).toMatch(/^Signed in to MCP server 'secured'\. The tokens are kept in .*mcp-auth \(only you can read them\)\.\n$/);
    const store = path.join(state, 'mcp-auth');
    expect(fs.statSync(store).mode & 0o777).toBe(0o700);
    const files = fs.readdirSync(store);
    expect(files).toHaveLength(1);
    expect(fs.statSync(path.join(store, files[0] as string)).mode & 0o777).toBe(0o600);

    // No terminal needed now: the tokens are in the store.
    const run = captureIo({}, folder);
    expect(await main(['--state-dir', state, 'tools', 'run', 'mcp.secured.echo', '--input', '{"text":"signed"}'], run)).toBe(EXIT_CODES.ok);
    expect(run.out()).toBe('echo: signed\n');

    const logout = captureIo({}, folder);
    expect(await main(['--state-dir', state, 'mcp', 'logout', 'secured'], logout)).toBe(EXIT_CODES.ok);
    expect(fs.readdirSync(store)).toEqual([]);
    const again = captureIo({}, folder);
    expect(await main(['--state-dir', state, 'tools', 'run', 'mcp.secured.echo', '--input', '{"text":"x"}'], again)).toBe(EXIT_CODES.notFound);
    expect(again.err()).toMatch(/MCP_AUTH_REQUIRED: .*the sign-in was declined\. Sign in with 'agents mcp login secured' in a terminal\./);
  });

  it('a service client (client_credentials): the sign-in file keeps its token, never the secret the configuration takes from the environment', async () => {
    const folder = temporaryFolder();
    const state = path.join(folder, 'state');
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({ mcpServers: { service: { url, oauth: { grant: 'client_credentials', clientId: 'reports', clientSecret: '${REPORTS_SECRET}' } } } }),
    );
    for (let run = 0; run < 2; run++) {
      const io = captureIo({ REPORTS_SECRET: SERVICE_SECRET }, folder);
      expect(await main(['--state-dir', state, 'tools', 'run', 'mcp.service.echo', '--input', '{"text":"from a service"}'], io)).toBe(EXIT_CODES.ok);
      expect(io.out()).toBe('echo: from a service\n');
    }
    const store = path.join(state, 'mcp-auth');
    const files = fs.readdirSync(store);
    expect(files).toHaveLength(1);
    const kept = fs.readFileSync(path.join(store, files[0] as string), 'utf8');
    expect(kept).toContain('access_token');
    expect(kept).toContain('"client_id": "reports"');
    expect(kept).not.toContain(SERVICE_SECRET);
  });

  it.each([
    ['a stdio server', 'files', /'agents mcp login' does not apply to MCP server 'files': it is a stdio server/],
    ['an HTTP server without "oauth"', 'plain', /'agents mcp login' does not apply to MCP server 'plain': it does not use OAuth/],
  ])('login on %s says the command does not apply (the configuration is fine)', async (_case, server, message) => {
    const folder = temporaryFolder();
    writeFixture(
      folder,
      'agents.config.json',
      JSON.stringify({ mcpServers: { files: { command: process.execPath, args: ['server.js'] }, plain: { url }, secured: { url, oauth: true } } }),
    );
    const login = withTerminal(captureIo({}, folder));
    expect(await main(['--state-dir', path.join(folder, 'state'), 'mcp', 'login', server], login)).toBe(EXIT_CODES.usage);
    expect(login.err()).toMatch(/^CLI_USAGE: /);
    expect(login.err()).toMatch(message);
    expect(login.err()).toContain('Servers that use OAuth: secured.');
    expect(login.err()).not.toMatch(/invalid/i);
  });

  it('refuses a token store others can read', async () => {
    const folder = temporaryFolder();
    const state = path.join(folder, 'state');
    fs.mkdirSync(path.join(state, 'mcp-auth'), { recursive: true, mode: 0o755 });
    fs.chmodSync(path.join(state, 'mcp-auth'), 0o755);
    writeFixture(folder, 'agents.config.json', JSON.stringify({ mcpServers: { secured: { url, oauth: true } } }));
    const login = withTerminal(captureIo({}, folder));
    expect(await main(['--state-dir', state, 'mcp', 'login', 'secured'], login)).toBe(EXIT_CODES.usage);
    expect(login.err()).toMatch(/^CLI_STATE_UNSAFE: /);
    expect(login.err()).toMatch(/The MCP sign-in store .*mcp-auth cannot be used: others may enter it \(mode 755\)/);
  });
});
