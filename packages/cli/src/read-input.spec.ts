import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CliError } from './cli-error';
import { captureIo, removeTemporaryFolders, temporaryFolder } from './cli.test-helper';
import { EXIT_CODES, main } from './index';
import { MAX_INPUT_BYTES, parseInput } from './read-input';

jest.setTimeout(30_000);
afterEach(() => removeTemporaryFolders());

function failure(run: () => unknown): CliError {
  try {
    run();
  } catch (error) {
    if (CliError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a CliError');
}

describe('--input is capped like the configuration files', () => {
  it('reads JSON inline and from @file', () => {
    const folder = temporaryFolder();
    fs.writeFileSync(path.join(folder, 'input.json'), '{"text":"from a file"}');
    expect(parseInput('{"a":1}', folder)).toEqual({ a: 1 });
    expect(parseInput('@input.json', folder)).toEqual({ text: 'from a file' });
  });

  it('refuses a file over the limit before reading it', () => {
    const folder = temporaryFolder();
    const big = path.join(folder, 'big.json');
    fs.writeFileSync(big, '');
    fs.truncateSync(big, MAX_INPUT_BYTES + 1);
    const error = failure(() => parseInput(`@${big}`, folder));
    expect(error.code).toBe('CLI_INPUT_INVALID');
    expect(error.message).toBe(`--input @${big}: ${big} is ${MAX_INPUT_BYTES + 1} bytes; the limit is ${MAX_INPUT_BYTES}. Pass a smaller input.`);
  });

  it('refuses an inline input over the limit', () => {
    const error = failure(() => parseInput(`"${'x'.repeat(MAX_INPUT_BYTES)}"`, temporaryFolder()));
    expect(error.message).toMatch(/^--input is \d+ bytes; the limit is 4194304\./);
  });

  it('refuses devices and FIFOs without reading or blocking', () => {
    const zero = failure(() => parseInput('@/dev/zero', '/'));
    expect(zero.code).toBe('CLI_INPUT_INVALID');
    expect(zero.message).toMatch(/^--input @\/dev\/zero: \/dev\/zero is not a regular file/);
    const folder = temporaryFolder();
    const fifo = path.join(folder, 'fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    // No writer ever opens it: a blocking open would hang this test.
    expect(failure(() => parseInput(`@${fifo}`, folder)).message).toContain('is not a regular file');
    expect(failure(() => parseInput(`@${folder}`, folder)).message).toContain('is not a regular file');
  });

  it('says what is wrong with a missing file and with text that is not JSON', () => {
    const folder = temporaryFolder();
    expect(failure(() => parseInput('@nope.json', folder)).message).toMatch(/^--input @nope\.json: cannot read .*nope\.json \(ENOENT/);
    expect(failure(() => parseInput('{nope', folder)).message).toMatch(/^--input is not valid JSON/);
  });

  it('through the command: exit 2 with the code', async () => {
    const io = captureIo({ TEST_WORKSPACE: temporaryFolder() });
    expect(await main(['tools', 'run', 'test.echo', '--input', '@/dev/zero'], io)).toBe(EXIT_CODES.usage);
    expect(io.err()).toMatch(/^CLI_INPUT_INVALID: --input @\/dev\/zero: \/dev\/zero is not a regular file/);
  });
});
