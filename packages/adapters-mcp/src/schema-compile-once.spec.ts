import { createSchemaValidator, type SchemaCompileOptions, type SchemaValidator } from '@ca/schema';
import { ToolRuntime } from '@ca/tool-lifecycle';
import { RecordingLogger } from '@ca/tool-lifecycle/testing';
import { createMcpAdapter } from './mcp-adapter';
import { countingSpawn, fixtureServer } from './mcp-fixtures.test-helper';

jest.setTimeout(60_000);

describe('every MCP schema is compiled once', () => {
  it('by the runtime, when it registers the tool: not by the adapter, not by the SDK, not per call', async () => {
    const real = createSchemaValidator();
    const compiled: string[] = [];
    const counting: SchemaValidator = {
      compile: (schema, options?: SchemaCompileOptions) => {
        compiled.push(`${options?.toolName} ${options?.direction}`);
        return real.compile(schema, options);
      },
      validate: (schema, value, options) => real.validate(schema, value, options),
    } as SchemaValidator;
    const logger = new RecordingLogger();
    const spawns = countingSpawn();
    const source = createMcpAdapter({ servers: { mcpServers: { fixture: fixtureServer({}, { include: ['sum', 'echo'] }) } }, spawn: spawns.spawn, logger });
    const runtime = new ToolRuntime({ sources: [source], validator: counting, logger });
    try {
      await runtime.runPlan({}, async (ctx) => {
        for (let call = 0; call < 20; call++) {
          const result = await runtime.execute('mcp.fixture.sum', { a: call, b: 1 }, ctx);
          expect(result).toMatchObject({ ok: true, output: { sum: call + 1 } });
        }
      });
      expect(compiled.sort()).toEqual(['mcp.fixture.echo input', 'mcp.fixture.sum input', 'mcp.fixture.sum output']);
    } finally {
      await runtime.dispose();
    }
  });
});
