import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Lints source text as if it were a file of a given package, through the
// workspace's real ESLint configuration and Nx project graph. A wrong import
// across the layers of shared/DESIGN.md must be a lint error.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');

// ESLint runs in its own process: its flat config is an ES module, which
// Jest's CommonJS sandbox cannot import.
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  const eslintBin = path.join(workspaceRoot, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const run = spawnSync(process.execPath, [eslintBin, '--format', 'json', '--stdin', '--stdin-filename', filePath], {
    cwd: workspaceRoot,
    input: code,
    encoding: 'utf8',
    env: { ...process.env, NX_DAEMON: 'false' },
  });
  if (run.stdout.trim() === '') throw new Error(`eslint produced no report: ${run.stderr}`);
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return (result?.messages ?? []).filter((message) => message.ruleId === '@nx/enforce-module-boundaries').map((message) => message.message);
}

jest.setTimeout(60_000);

describe('layering is enforced by lint', () => {
  it.each([
    ['packages/domain/src/violation.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';", 'domain → lifecycle'],
    ['packages/schema/src/violation.ts', "export { CancellationToken } from '@ca/tool-context';", 'schema → context'],
    ['packages/tool-context/src/violation.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';", 'context → lifecycle'],
    ['packages/tool-lifecycle/src/violation.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';", 'lifecycle → adapter'],
    ['packages/adapters-mcp/src/violation.ts', "export { createSkillsAdapter } from '@ca/adapters-skills';", 'adapter → adapter'],
    ['packages/adapters-builtin/src/violation.ts', "export { main } from '@ca/cli';", 'adapter → app'],
    ['packages/model-tools/src/violation.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';", 'front door → adapter'],
    ['packages/model-tools/src/violation.ts', "export { main } from '@ca/cli';", 'front door → app'],
    ['packages/tool-lifecycle/src/violation.ts', "export { ModelTools } from '@ca/model-tools';", 'lifecycle → front door'],
    ['packages/adapters-mcp/src/violation.ts', "export { ModelTools } from '@ca/model-tools';", 'adapter → front door'],
  ])('refuses %s importing upward (%s)', async (filePath, code) => {
    const errors = await boundaryErrors(filePath, code);
    expect(errors.length).toBeGreaterThan(0);
    // An upward import closes a cycle in the project graph, which the rule
    // reports first; otherwise it reports the tag constraint.
    expect(errors.join('\n')).toMatch(/can only depend on libs tagged|Circular dependency/);
  });

  it('reports an adapter importing another adapter as a tag violation', async () => {
    const errors = await boundaryErrors('packages/adapters-wrapped/src/violation.ts', "export { x } from '@ca/adapters-mcp';");
    expect(errors.join('\n')).toMatch(/"layer:adapter" can only depend on libs tagged with "layer:domain", "layer:schema", "layer:context", "layer:lifecycle"/);
  });

  it('refuses a runtime dependency in @ca/domain', async () => {
    const errors = await boundaryErrors('packages/domain/src/violation.ts', "import 'tsyringe';\nexport const x = 1;");
    expect(errors.join('\n')).toMatch(/tsyringe/);
  });

  it.each([
    ['packages/schema/src/allowed.ts', "export type { Tool } from '@ca/domain';"],
    ['packages/tool-lifecycle/src/allowed.ts', "export { CancellationToken } from '@ca/tool-context';"],
    ['packages/adapters-mcp/src/allowed.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';"],
    ['packages/cli/src/allowed.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';"],
    ['packages/cli/src/allowed.ts', "export { ModelTools } from '@ca/model-tools';"],
    ['packages/model-tools/src/allowed.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';"],
  ])('allows %s importing downward', async (filePath, code) => {
    expect(await boundaryErrors(filePath, code)).toEqual([]);
  });
});
