import fs from 'node:fs';
import path from 'node:path';
import { isProcessAlive } from '@ca/sandbox/testing';
import { captureMcpIo, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

// server-everything as a real stdio server, through __fixtures__/counted-server.js, which records every start.
jest.setTimeout(90_000);
afterEach(() => removeTemporaryFolders());

describe('agents tools search', () => {
  it('lists a server once, then searches its cached tools without starting it; a found tool starts its server at its call', async () => {
    const stateDir = temporaryFolder('ca-cli-state-');
    const first = captureMcpIo({ AGENTS_STATE_DIR: stateDir });
    expect(await main(['tools', 'search', 'add two numbers', '-k', '3'], first)).toBe(EXIT_CODES.ok);
    expect(first.out()).toMatch(/^name\s+source\s+score\s+description\n/);
    expect(first.out()).toMatch(/^mcp\.everything\.get-sum\s+mcp\s+\d+\.\d\d\s+/m);
    expect(first.starts()).toHaveLength(1);
    const cached = fs.readdirSync(path.join(stateDir, 'mcp-tools'));
    expect(cached).toHaveLength(1);
    expect(cached[0]).toMatch(/^[0-9a-f]{64}\.json$/);
    expect(fs.statSync(path.join(stateDir, 'mcp-tools', cached[0] as string)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(stateDir, 'mcp-tools')).mode & 0o777).toBe(0o700);

    // The same state folder, another command: the server is not started to search.
    const again = captureMcpIo({ AGENTS_STATE_DIR: stateDir, TEST_STARTS: first.env['TEST_STARTS'] as string });
    expect(await main(['tools', 'search', 'add two numbers', '-k', '3', '--json'], again)).toBe(EXIT_CODES.ok);
    const found = JSON.parse(again.out()) as { query: string; tools: { name: string; source: string }[] };
    expect(found.query).toBe('add two numbers');
    expect(found.tools[0]).toMatchObject({ name: 'mcp.everything.get-sum', source: 'mcp' });
    expect(first.starts()).toHaveLength(1);

    // Running what was found starts the server, at its call.
    const run = captureMcpIo({ AGENTS_STATE_DIR: stateDir, TEST_STARTS: first.env['TEST_STARTS'] as string });
    expect(await main(['tools', 'run', 'mcp.everything.get-sum', '--input', '{"a":19,"b":23}'], run)).toBe(EXIT_CODES.ok);
    expect(run.out()).toBe('The sum of 19 and 23 is 42.\n');
    expect(first.starts()).toHaveLength(2);
    for (const pid of first.starts()) expect(isProcessAlive(pid)).toBe(false);

    // --refresh, like tools list, lists every server anew.
    const refreshed = captureMcpIo({ AGENTS_STATE_DIR: stateDir, TEST_STARTS: first.env['TEST_STARTS'] as string });
    expect(await main(['tools', 'search', 'echo', '--refresh'], refreshed)).toBe(EXIT_CODES.ok);
    expect(first.starts()).toHaveLength(3);
    const listed = captureMcpIo({ AGENTS_STATE_DIR: stateDir, TEST_STARTS: first.env['TEST_STARTS'] as string });
    expect(await main(['tools', 'list'], listed)).toBe(EXIT_CODES.ok);
    expect(first.starts()).toHaveLength(4);
  });

  it('searches every source with a pattern, and refuses a bad k or a pattern the engine cannot run', async () => {
    const io = captureMcpIo();
    expect(await main(['tools', 'search', '^builtin\\.fs\\.', '--regex'], io)).toBe(EXIT_CODES.ok);
    expect(io.out()).toMatch(/^builtin\.fs\.read\s+builtin/m);
    expect(io.out()).toMatch(/^builtin\.fs\.write\s+builtin/m);
    const k = captureMcpIo();
    expect(await main(['tools', 'search', 'x', '-k', '0'], k)).toBe(EXIT_CODES.usage);
    expect(k.err()).toBe('CLI_USAGE: -k 0: expected a whole number from 1 to 100.\n');
    const pattern = captureMcpIo();
    expect(await main(['tools', 'search', '(a)\\1', '--regex'], pattern)).toBe(EXIT_CODES.usage);
    expect(pattern.err()).toMatch(/^CLI_USAGE: The query cannot be searched: query must be a regular expression in RE2 syntax/);
    const none = captureMcpIo();
    expect(await main(['tools', 'search', 'zzqx'], none)).toBe(EXIT_CODES.ok);
    expect(none.out()).toMatch(/^No tool matches 'zzqx' among \d+ tools\./);
  });
});
