import fs from 'node:fs';
import path from 'node:path';
import { captureIo, removeTemporaryFolders, temporaryFolder, writeFixture } from './cli.test-helper';
import { EXIT_CODES, main } from './index';

jest.setTimeout(60_000);

afterEach(() => removeTemporaryFolders());

function io() {
  const workspace = temporaryFolder();
  fs.writeFileSync(path.join(workspace, 'hello.txt'), 'hello\n');
  return captureIo({ TEST_WORKSPACE: workspace });
}

describe('agents tools export', () => {
  it('prints OpenAI Chat Completions definitions: provider names, strict schemas, only what the plan lets run', async () => {
    const all = io();
    expect(await main(['tools', 'export', '--format', 'openai-chat'], all)).toBe(EXIT_CODES.ok);
    const definitions = JSON.parse(all.out()) as { function: { name: string; strict: boolean; parameters: { additionalProperties?: boolean } } }[];
    const names = definitions.map((tool) => tool.function.name);
    expect(names).toEqual(expect.arrayContaining(['builtin_fs_read', 'builtin_fs_write', 'test_echo']));
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const echo = definitions.find((tool) => tool.function.name === 'test_echo')!;
    expect(echo.function.strict).toBe(true);
    expect(echo.function.parameters.additionalProperties).toBe(false);

    const readOnly = io();
    expect(await main(['tools', 'export', '--format', 'openai-chat', '--read-only'], readOnly)).toBe(EXIT_CODES.ok);
    const kept = (JSON.parse(readOnly.out()) as { function: { name: string } }[]).map((tool) => tool.function.name);
    expect(kept).toContain('builtin_fs_read');
    expect(kept).not.toContain('builtin_fs_write');
  });

  it('takes the policy of a plan file, marks refused tools on request, and prints the names both ways', async () => {
    const folder = temporaryFolder();
    const planFile = writeFixture(
      folder,
      'plan.yaml',
      'policy:\n  readOnly: true\nsteps:\n  - tool: builtin.fs.read\n    input: { resource: work, path: hello.txt }\n',
    );
    const out = io();
    expect(await main(['tools', 'export', '--format', 'anthropic', '--plan-file', planFile, '--mark-refused', '--names'], out)).toBe(EXIT_CODES.ok);
    const { definitions, names } = JSON.parse(out.out()) as {
      definitions: { name: string; description: string; input_schema: unknown }[];
      names: Record<string, string>;
    };
    const write = definitions.find((tool) => tool.name === 'builtin_fs_write')!;
    expect(write.description).toMatch(/^\[Not available in this plan: it changes things and this plan is read-only\. Do not call it\.\]/);
    expect(names['builtin_fs_write']).toBe('builtin.fs.write');
    expect(names['test_hello']).toBe('test.hello');
  });

  it.each(['gemini', 'mcp', 'openai-responses'])('prints %s definitions', async (format) => {
    const out = io();
    expect(await main(['tools', 'export', '--format', format], out)).toBe(EXIT_CODES.ok);
    expect((JSON.parse(out.out()) as unknown[]).length).toBeGreaterThan(3);
  });

  it('refuses an unknown format, and a plan file together with policy flags', async () => {
    const unknown = io();
    expect(await main(['tools', 'export', '--format', 'openai'], unknown)).toBe(EXIT_CODES.usage);
    expect(unknown.err()).toMatch(/--format openai: expected one of openai-responses, openai-chat, anthropic, gemini, mcp/);
    const both = io();
    expect(await main(['tools', 'export', '--format', 'mcp', '--plan-file', 'x.yaml', '--read-only'], both)).toBe(EXIT_CODES.usage);
    expect(both.err()).toMatch(/--plan-file gives the policy/);
  });
});
