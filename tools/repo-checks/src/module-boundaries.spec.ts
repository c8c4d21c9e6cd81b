import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Lints source text as if it were a file of a given package, through the
// workspace's real ESLint configuration and Nx project graph. A wrong import
// across the layers of shared/DESIGN.md must be a lint error.
const workspaceRoot = path.resolve(__dirname, '..', '..', '..');

// ESLint runs in its own process: its flat config is an ES module, which
// Jest's CommonJS sandbox cannot import.
async function boundaryErrors(filePath: string, code: string): Promise<string[]> {
  return (await lintReport(filePath, code)).filter((message) => message.ruleId === '@nx/enforce-module-boundaries').map((message) => message.message);
}

/** Messages of the import rules (the layers and `no-restricted-imports`). */
async function lintMessages(filePath: string, code: string): Promise<string[]> {
  return (await lintReport(filePath, code))
    .filter((message) => message.ruleId === '@nx/enforce-module-boundaries' || message.ruleId === 'no-restricted-imports')
    .map((message) => message.message);
}

async function lintReport(filePath: string, code: string): Promise<{ ruleId: string | null; message: string }[]> {
  const eslintBin = path.join(workspaceRoot, 'node_modules', 'eslint', 'bin', 'eslint.js');
  const run = spawnSync(process.execPath, [eslintBin, '--format', 'json', '--stdin', '--stdin-filename', filePath], {
    cwd: workspaceRoot,
    input: code,
    encoding: 'utf8',
    env: { ...process.env, NX_DAEMON: 'false' },
  });
  if (run.stdout.trim() === '') throw new Error(`eslint produced no report: ${run.stderr}`);
  const [result] = JSON.parse(run.stdout) as { messages: { ruleId: string | null; message: string }[] }[];
  return result?.messages ?? [];
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
    ['packages/sandbox/src/violation.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';", 'sandbox → lifecycle'],
    ['packages/sandbox/src/violation.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';", 'sandbox → adapter'],
    ['packages/tool-context/src/violation.ts', "export { runProcess } from '@ca/sandbox';", 'context → sandbox'],
    ['packages/model-tools/src/violation.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';", 'front door → adapter'],
    ['packages/model-tools/src/violation.ts', "export { main } from '@ca/cli';", 'front door → app'],
    ['packages/tool-lifecycle/src/violation.ts', "export { ModelTools } from '@ca/model-tools';", 'lifecycle → front door'],
    ['packages/adapters-mcp/src/violation.ts', "export { ModelTools } from '@ca/model-tools';", 'adapter → front door'],
    ['packages/mcp-server/src/violation.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';", 'front door → adapter'],
    ['packages/model-tools/src/violation.ts', "export { McpGateway } from '@ca/mcp-server';", 'front door → the front door built on it'],
  ])('refuses %s importing upward (%s)', async (filePath, code) => {
    const errors = await boundaryErrors(filePath, code);
    expect(errors.length).toBeGreaterThan(0);
    // An upward import closes a cycle in the project graph, which the rule
    // reports first; otherwise it reports the tag constraint.
    expect(errors.join('\n')).toMatch(/can only depend on libs tagged|Circular dependency/);
  });

  it('reports an adapter importing another adapter as a tag violation', async () => {
    const errors = await boundaryErrors('packages/adapters-wrapped/src/violation.ts', "export { x } from '@ca/adapters-mcp';");
    expect(errors.join('\n')).toMatch(
      /"layer:adapter" can only depend on libs tagged with "layer:domain", "layer:schema", "layer:context", "layer:sandbox", "layer:lifecycle"/,
    );
  });

  it('refuses @ca/sandbox in the runtime outside its deprecated re-exports: the runtime starts no program', async () => {
    const errors = await lintMessages('packages/tool-lifecycle/src/violation.ts', "export { runProcess } from '@ca/sandbox';\n");
    expect(errors.join('\n')).toMatch(/The runtime does not start programs/);
    expect(await lintMessages('packages/tool-lifecycle/src/deprecated/allowed.ts', "export { runProcess } from '@ca/sandbox';\n")).toEqual([]);
  });

  it('refuses @ca/schema in @ca/sandbox: it sits beside the schema layer, not above it', async () => {
    const errors = await boundaryErrors('packages/sandbox/src/violation.ts', "export { createSchemaValidator } from '@ca/schema';");
    expect(errors.join('\n')).toMatch(/"layer:sandbox" can only depend on libs tagged with "layer:domain", "layer:context"/);
  });

  it('refuses a runtime dependency in @ca/domain', async () => {
    const errors = await boundaryErrors('packages/domain/src/violation.ts', "import 'tsyringe';\nexport const x = 1;");
    expect(errors.join('\n')).toMatch(/tsyringe/);
  });

  it.each([
    ['packages/schema/src/allowed.ts', "export type { Tool } from '@ca/domain';"],
    ['packages/tool-lifecycle/src/allowed.ts', "export { CancellationToken } from '@ca/tool-context';"],
    ['packages/adapters-mcp/src/allowed.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';"],
    ['packages/adapters-mcp/src/allowed.ts', "export { startProcess } from '@ca/sandbox';"],
    ['packages/sandbox/src/allowed.ts', "export { confinePath } from '@ca/tool-context';"],
    ['packages/cli/src/allowed.ts', "export { createMcpAdapter } from '@ca/adapters-mcp';"],
    ['packages/cli/src/allowed.ts', "export { ModelTools } from '@ca/model-tools';"],
    ['packages/model-tools/src/allowed.ts', "export { ToolRuntime } from '@ca/tool-lifecycle';"],
    ['packages/mcp-server/src/allowed.ts', "export { ModelTools } from '@ca/model-tools';"],
    ['packages/cli/src/allowed.ts', "export { McpGateway } from '@ca/mcp-server';"],
  ])('allows %s importing downward', async (filePath, code) => {
    expect(await boundaryErrors(filePath, code)).toEqual([]);
  });
});
