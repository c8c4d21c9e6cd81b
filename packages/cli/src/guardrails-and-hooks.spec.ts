import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { captureIo, captureMcpIo, fixtures, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { main } from './main';

// The output guardrail and command hooks as a user meets them: the CLI's
// `main` (what bin.js runs) over a real MCP server (server-everything) and
// real hook programs (node scripts answering Claude Code's contract).
jest.setTimeout(60_000);
afterEach(removeTemporaryFolders);

const answerHook = path.join(fixtures, 'answer-hook.js');
const countedServer = path.join(fixtures, 'counted-server.js');
const PASSWORD = 'Pa55-w0rd-of-orders';
const DATABASE_URL = `postgres://app:${PASSWORD}@db/orders`;

/** A folder with a configuration of the everything server, a workspace, and these hooks. */
function configured(hooks: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}): string {
  const folder = temporaryFolder();
  writeFixture(
    folder,
    'agents.config.json',
    JSON.stringify({
      builtin: { tools: ['builtin.fs.read', 'builtin.fs.write'] },
      sandbox: 'off',
      resources: [{ id: 'work', path: 'work', access: 'write' }],
      mcpServers: { everything: { command: 'node', args: [countedServer] } },
      hooks,
      ...extra,
    }),
  );
  fs.mkdirSync(path.join(folder, 'work'));
  return folder;
}

const hook = (name: string, on: string, answer: unknown, record?: string, tools?: string) => ({
  name,
  on,
  command: 'node',
  args: [answerHook, typeof answer === 'string' ? answer : JSON.stringify(answer), ...(record === undefined ? [] : [record])],
  timeoutMs: 20_000,
  ...(tools === undefined ? {} : { tools }),
});

describe('the output guardrail hides every secret shape traces hide', () => {
  it('a password inside a URL, an Authorization header and password= in a real MCP server output (tools run --json)', async () => {
    const io = captureMcpIo();
    const message = `connect with ${DATABASE_URL}\nAuthorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl\nform user=app&password=hunter2-x`;
    expect(await main(['tools', 'run', 'mcp.everything.echo', '--json', '--input', JSON.stringify({ message })], io)).toBe(0);
    const printed = io.out();
    for (const secret of [PASSWORD, 'eyJhbGciOi', 'hunter2-x']) expect(printed).not.toContain(secret);
    const result = JSON.parse(printed);
    expect(result.output).toContain('postgres://[REDACTED url-credentials]@db/orders');
    expect(JSON.stringify(result.content)).toContain('postgres://[REDACTED url-credentials]@db/orders');
    expect(result.trace.hooks[0]).toMatchObject({
      hook: 'secret-redaction',
      decision: 'redact',
      redactions: expect.objectContaining({ 'url-credentials': 2, 'authorization-header': 2, 'secret-parameter': 2 }),
    });
  }, 60_000);

  it('the values of secret-named keys of a file read as structured output, and not with shapes: false', async () => {
    const on = configured([]);
    writeFixture(on, 'work/settings.json', JSON.stringify({ database: DATABASE_URL }));
    const io = captureIo({}, on);
    expect(await main(['tools', 'run', 'builtin.fs.read', '--json', '--input', JSON.stringify({ resource: 'work', path: 'settings.json' })], io)).toBe(0);
    expect(io.out()).not.toContain(PASSWORD);
    const off = configured([], { guardrails: { secrets: { shapes: false } } });
    writeFixture(off, 'work/settings.json', JSON.stringify({ database: DATABASE_URL }));
    const shown = captureIo({}, off);
    expect(await main(['tools', 'run', 'builtin.fs.read', '--input', JSON.stringify({ resource: 'work', path: 'settings.json' })], shown)).toBe(0);
    expect(shown.out()).toContain(DATABASE_URL);
  }, 60_000);
});

describe("an after-hook's replacement replaces every representation", () => {
  it('the text content blocks of the original output do not reach the caller (tools run --json)', async () => {
    const replacement = { hookSpecificOutput: { hookEventName: 'PostToolUse', updatedMCPToolOutput: '(withheld by policy)' } };
    const folder = configured([hook('policy', 'after', replacement, undefined, 'mcp.everything.*')]);
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.everything.echo', '--json', '--input', JSON.stringify({ message: 'the launch code is 0000' })], io)).toBe(0);
    expect(io.out()).not.toContain('launch code');
    const result = JSON.parse(io.out());
    expect(result.output).toBe('(withheld by policy)');
    expect(result.content).toBeUndefined();
    expect(result.trace.hooks.map((entry: { hook: string; decision: string }) => [entry.hook, entry.decision])).toEqual([
      ['secret-redaction', 'continue'],
      ['policy', 'replace'],
      ['secret-redaction:after-hooks', 'continue'],
    ]);
    const plain = captureIo({}, folder);
    expect(await main(['tools', 'run', 'mcp.everything.echo', '--input', JSON.stringify({ message: 'the launch code is 0000' })], plain)).toBe(0);
    expect(plain.out()).toContain('(withheld by policy)');
    expect(plain.out()).not.toContain('launch code');
  }, 60_000);
});

describe('command hooks fail closed and see only redacted outputs', () => {
  it.each([
    ['an unknown decision', { decision: 'deny' }, /answered "decision" "deny", which a PreToolUse hook cannot answer/],
    ['an unknown permission decision', { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'reject' } }, /permissionDecision" "reject"/],
    ['a hookSpecificOutput that is not an object', { hookSpecificOutput: 'deny' }, /"hookSpecificOutput" "deny"/],
    ['continue that is not a boolean', { continue: 'no' }, /"continue" "no"/],
  ])('a hook before a call that answers %s (exit 0) refuses the call: the tool does not run', async (_label, answer, why) => {
    const folder = configured([hook('gatekeeper', 'before', answer, undefined, 'builtin.fs.*')]);
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'builtin.fs.write', '--input', JSON.stringify({ resource: 'work', path: 'out.txt', content: 'x' })], io)).toBe(1);
    expect(io.err()).toMatch(/TOOL_HOOK_FAILED: Hook 'gatekeeper' failed before the call/);
    expect(io.err()).toMatch(why);
    expect(fs.existsSync(path.join(folder, 'work', 'out.txt'))).toBe(false);
  });

  it('a hook after a call that answers an unknown decision withholds the output', async () => {
    const folder = configured([hook('reviewer', 'after', { decision: 'deny', reason: 'no' }, undefined, 'builtin.fs.*')]);
    writeFixture(folder, 'work/a.txt', 'the report\n');
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'builtin.fs.read', '--input', JSON.stringify({ resource: 'work', path: 'a.txt' })], io)).toBe(1);
    expect(io.err()).toMatch(/TOOL_HOOK_FAILED: Hook 'reviewer' failed after the call.*"decision" "deny", which a PostToolUse hook cannot answer/);
    expect(io.out()).not.toContain('the report');
  });

  it('keeps the answers of the contract working: approve and allow let the call run, block refuses it', async () => {
    for (const answer of [{ decision: 'approve' }, { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } }, {}]) {
      const folder = configured([hook('gatekeeper', 'before', answer, undefined, 'builtin.fs.*')]);
      expect(
        await main(['tools', 'run', 'builtin.fs.write', '--input', JSON.stringify({ resource: 'work', path: 'out.txt', content: 'x' })], captureIo({}, folder)),
      ).toBe(0);
      expect(fs.readFileSync(path.join(folder, 'work', 'out.txt'), 'utf8')).toBe('x');
    }
    const blocked = configured([hook('gatekeeper', 'before', { decision: 'block', reason: 'not today' }, undefined, 'builtin.fs.*')]);
    const io = captureIo({}, blocked);
    expect(await main(['tools', 'run', 'builtin.fs.write', '--input', JSON.stringify({ resource: 'work', path: 'out.txt', content: 'x' })], io)).toBe(3);
    expect(io.err()).toContain("refused by hook 'gatekeeper': not today");
  });

  it('a hook after a call is given the output with its secrets redacted, and what it gives back is redacted again', async () => {
    const record = path.join(temporaryFolder(), 'seen.jsonl');
    const leaky = {
      hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: { note: 'rotated', token: 'tok_live_1234567890abcdef', url: DATABASE_URL } },
    };
    const folder = configured([hook('auditor', 'after', leaky, record, 'mcp.everything.*')]);
    const message = `DATABASE_URL=${DATABASE_URL}\nAuthorization: Bearer eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl\n`;
    const io = captureIo({}, folder);
    const status = await main(['tools', 'run', 'mcp.everything.echo', '--json', '--input', JSON.stringify({ message })], io);
    expect(io.err()).toBe('');
    expect(status).toBe(0);
    // The program saw the call's input (the model's, as written) and the output as the caller would get it.
    const seen = JSON.stringify(JSON.parse(fs.readFileSync(record, 'utf8')).tool_response);
    expect(seen).not.toContain(PASSWORD);
    expect(seen).not.toContain('eyJhbGciOi');
    expect(seen).toContain('postgres://[REDACTED url-credentials]@db/orders');
    const printed = io.out();
    expect(printed).not.toContain(PASSWORD);
    expect(printed).not.toContain('tok_live_1234567890abcdef');
    expect(JSON.parse(printed).output).toEqual({
      note: 'rotated',
      token: expect.stringMatching(/^\[REDACTED /),
      url: 'postgres://[REDACTED url-credentials]@db/orders',
    });
  });

  it('a hook on a failed call is given the message with its secrets redacted', async () => {
    const record = path.join(temporaryFolder(), 'seen.jsonl');
    const folder = configured([hook('on-failure', 'error', {}, record, 'test.*')], { custom: { modules: ['./failing.js'] } });
    writeFixture(
      folder,
      'failing.js',
      `const { defineTool } = require('@ca/adapters-custom');
       module.exports = defineTool({
         name: 'test.connect', description: 'Fails as a driver does.', inputSchema: { type: 'object' },
         capability: { writes: false, openWorld: false },
         execute: async () => { throw new Error('could not connect to ${DATABASE_URL}: timeout'); },
       });`,
    );
    const io = captureIo({}, folder);
    expect(await main(['tools', 'run', 'test.connect', '--input', '{}'], io)).toBe(1);
    const seen = JSON.parse(fs.readFileSync(record, 'utf8'));
    expect(seen.hook_event_name).toBe('PostToolUseFailure');
    expect(seen.error.message).toContain('could not connect to postgres://***@db/orders');
    expect(JSON.stringify(seen)).not.toContain(PASSWORD);
  });
});

describe('the current folder is not a secret', () => {
  it('paths under the current folder print whole, with PWD, OLDPWD and SSH_AUTH_SOCK set as a shell sets them; a real secret stays hidden', async () => {
    const folder = configured([]);
    const token = 'tok-1234567890-abcdef';
    const io = captureIo(
      {
        PWD: folder,
        OLDPWD: path.dirname(folder),
        SSH_AUTH_SOCK: folder,
        GOOGLE_APPLICATION_CREDENTIALS: path.join(folder, 'agents.config.json'),
        SERVICE_TOKEN: token,
      },
      folder,
    );
    expect(await main(['plan', 'check', `missing-${token}.yaml`], io)).not.toBe(0);
    expect(io.err()).toContain(`${folder}${path.sep}missing-***.yaml`);
    expect(io.err()).not.toContain('***/');
    expect(io.err()).not.toContain(token);
  });

  it('through the real binary, in the environment a shell gives it', () => {
    const folder = configured([]);
    const bin = path.resolve(__dirname, '..', 'dist', 'bin.js');
    const run = spawnSync(process.execPath, [bin, 'plan', 'check', 'missing.yaml'], {
      cwd: folder,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '',
        PWD: folder,
        OLDPWD: path.dirname(folder),
        AGENTS_STATE_DIR: temporaryFolder('ca-cli-state-'),
      },
      encoding: 'utf8',
    });
    expect(run.stderr).toContain(`Plan file ${path.join(folder, 'missing.yaml')} does not exist`);
  });
});
