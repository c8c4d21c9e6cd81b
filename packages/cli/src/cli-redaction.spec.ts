import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { CliRedactor } from './cli-redaction';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);
afterEach(() => removeTemporaryFolders());

const SECRET = 's3cret-pw';

describe('one redaction choke point for what the command prints', () => {
  it.each([
    ['one slash', `redis:/planner:${SECRET}@127.0.0.1:6379`],
    ['a trailing space', `redis://planner:${SECRET}@127.0.0.1:6379 `],
    ['an unencoded space', `redis://planner:${SECRET} x@127.0.0.1:6379`],
  ])('a mistyped --registry URL (%s) is refused without its password, as --registry and as --registry=', async (_label, url) => {
    for (const args of [
      ['--registry', url, 'plan', 'list'],
      [`--registry=${url}`, 'plan', 'list'],
    ]) {
      const io = captureIo({}, temporaryFolder());
      expect(await main(args, io)).toBe(EXIT_CODES.usage);
      expect(io.err()).toMatch(/^CLI_USAGE: --registry redis:\/{0,2}\*\*\*@127\.0\.0\.1:6379 ?: expected 'local' or a Redis URL/);
      expect(io.err()).not.toContain(SECRET.slice(0, 6));
      expect(io.err()).not.toContain('planner:');
    }
  });

  it("hides a URL's credentials in commander's own usage errors and in an endpoint that does not parse", async () => {
    const unknown = captureIo({}, temporaryFolder());
    expect(await main([`--registri=redis://planner:${SECRET}@127.0.0.1:6379`, 'plan', 'list'], unknown)).toBe(EXIT_CODES.usage);
    expect(unknown.err()).toMatch(/unknown option '--registri=redis:\/\/\*\*\*@127\.0\.0\.1:6379'/);
    const endpoint = captureIo({}, temporaryFolder());
    expect(await main(['--otel-endpoint', `http://collector:${SECRET}@[::1`, 'tools', 'run', 'builtin.fs.list', '--input', '{}'], endpoint)).toBe(
      EXIT_CODES.usage,
    );
    expect(endpoint.err()).toMatch(/^CLI_USAGE: --otel-endpoint 'http:\/\/\*\*\*@\[::1' is not a URL/);
    for (const io of [unknown, endpoint]) expect(io.err() + io.out()).not.toContain(SECRET.slice(0, 6));
  });

  it('hides the value of a secret variable and of a secret key of the configuration, wherever an error quotes it', async () => {
    const folder = temporaryFolder();
    const token = 'tok-1234567890-abcdef';
    const configured = 'configured-api-key-987654';
    fs.writeFileSync(
      path.join(folder, 'leaky.js'),
      `const { defineTool } = require('@ca/adapters-custom');
       module.exports = defineTool({
         name: 'test.leaky', description: 'Fails with what it was given.', inputSchema: { type: 'object' },
         capability: { writes: false, openWorld: false },
         execute: async () => { throw new Error('upstream said no to ' + process.env.SERVICE_TOKEN + ' and ' + ${JSON.stringify(configured)}); },
       });`,
    );
    fs.writeFileSync(
      path.join(folder, 'agents.config.json'),
      JSON.stringify({
        builtin: false,
        custom: { modules: ['./leaky.js'] },
        mcpServers: { remote: { url: 'http://127.0.0.1:1/mcp', headers: { 'X-Api-Key': configured }, disabled: true } },
      }),
    );
    // The tool module reads the process's environment; the command, the one it is given.
    process.env['SERVICE_TOKEN'] = token;
    const io = captureIo({ SERVICE_TOKEN: token }, folder);
    const json = captureIo({ SERVICE_TOKEN: token }, folder);
    try {
      expect(await main(['tools', 'run', 'test.leaky', '--input', '{}'], io)).toBe(EXIT_CODES.failed);
      expect(await main(['tools', 'run', 'test.leaky', '--input', '{}', '--json'], json)).toBe(EXIT_CODES.failed);
    } finally {
      delete process.env['SERVICE_TOKEN'];
    }
    expect(io.err()).toMatch(/upstream said no to \*\*\* and \*\*\*/);
    for (const output of [io.err(), io.out(), json.out(), json.err()]) {
      expect(output).not.toContain(token);
      expect(output).not.toContain(configured);
    }
  });

  it('learns credentials from arguments, the environment and a configuration, and hides them in any words', () => {
    const redactor = new CliRedactor()
      .learnArguments(['--registry', 'redis:/ops:pa%40ss-w0rd@cache', 'plan', 'list'])
      .learnEnvironment({
        REDIS_PASSWORD: 'env-password-1',
        SHORT_TOKEN: 'abc',
        USE_AUTH: 'true',
        OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20hdr-secret-123',
      })
      .learnConfiguration({ registry: { url: 'rediss://svc:cfg-pass-42@cache:6380' }, mcpServers: { a: { env: { GITHUB_TOKEN: 'ghp-like-value-1' } } } });
    const text = 'pa%40ss-w0rd pa@ss-w0rd env-password-1 abc true Bearer%20hdr-secret-123 cfg-pass-42 svc:cfg-pass-42 ghp-like-value-1 ops:pa%40ss-w0rd';
    expect(redactor.redactKnown(text)).toBe('*** *** *** abc true *** *** *** *** ***');
    expect(redactor.redact('see https://u:p@host/x')).toBe('see https://***@host/x');
    expect(redactor.redactKnown('see https://u:p@host/x')).toBe('see https://u:p@host/x');
  });
});
