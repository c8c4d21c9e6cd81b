// Property: whatever input a caller passes, against whatever schema a tool
// declares, `runtime.execute` ends in a result or a documented error — never
// a crash, a hang, or a change to the caller's input.
import fc from 'fast-check';
import { ToolSchemaValidationError, createSchemaValidator } from '@ca/schema';
import { ToolExecutionError, ToolRegistrationError, ToolRuntime, type ExecutionResult } from '@ca/tool-lifecycle';
import { InMemoryToolSource, RecordingLogger, TestTool } from '@ca/tool-lifecycle/testing';
import { settle, withinHangGuard } from './support/guards';
import { invalidSchemaArbitrary, jsonEqual, modelValid, schemaArbitrary, smallJson, valueFor, type ModelSchema } from './support/json-schema-model';
import { propertyParameters } from './support/property-parameters';

// One validator for all runs: compiled schemas are cached by content, as in a long-lived service.
const validator = createSchemaValidator();

interface EchoRun {
  readonly runtime: ToolRuntime;
  readonly tool: TestTool;
  readonly logger: RecordingLogger;
}

/** A runtime with one echo tool whose input (and optionally strict output) schema is `schema`. */
function echoRuntime(schema: ModelSchema, checkOutput: boolean): EchoRun {
  const tool = new TestTool({
    name: 'prop.echo',
    inputSchema: schema,
    ...(checkOutput ? { outputSchema: schema, strictOutput: true } : {}),
    wrapOutput: false,
    // Returns the very input it was given, as a full ToolResult, so that no
    // input is mistaken for a result.
    execute: (input: unknown) => ({ ok: true, output: input }),
  });
  const logger = new RecordingLogger();
  const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([tool])], validator, logger });
  return { runtime, tool, logger };
}

function failWith(reason: unknown): never {
  throw new Error(`execute threw instead of returning a result: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : fc.stringify(reason)}`);
}

describe('random inputs against random tool schemas', () => {
  it('valid schemas: the tool runs exactly when the input is valid (by an independent model); otherwise a returned ToolSchemaValidationError', async () => {
    const arbitrary = schemaArbitrary().chain((schema) => fc.tuple(fc.constant(schema), valueFor(schema), fc.boolean()));
    let valid = 0;
    let invalid = 0;
    await fc.assert(
      fc.asyncProperty(arbitrary, async ([schema, input, checkOutput]) => {
        const { runtime, tool } = echoRuntime(schema, checkOutput);
        const before = fc.stringify(input);
        const ctx = runtime.createPlan();
        const outcome = await withinHangGuard(settle(runtime.execute('prop.echo', input, ctx)), 'execute');
        if (outcome.status === 'rejected') failWith(outcome.reason);
        const result: ExecutionResult = outcome.value;

        // The caller's input is untouched (no defaults filled in, nothing coerced or removed).
        expect(fc.stringify(input)).toBe(before);
        expect(ctx.traces).toHaveLength(1);
        expect(ctx.traces[0].success).toBe(result.ok);
        if (modelValid(schema, input)) {
          valid++;
          expect(result.ok ? undefined : result.error).toBeUndefined();
          expect(tool.count('execute')).toBe(1);
          expect(result.ok && jsonEqual(result.output, input)).toBe(true);
          expect(ctx.traces[0].resultSizeBytes).toBe(Buffer.byteLength(JSON.stringify(input), 'utf8'));
        } else {
          invalid++;
          expect(result.ok).toBe(false);
          expect(tool.count('execute')).toBe(0);
          const error = result.ok ? undefined : result.error;
          expect(ToolSchemaValidationError.isInstance(error)).toBe(true);
          const validation = error as ToolSchemaValidationError;
          expect(validation.direction).toBe('input');
          expect(validation.issues.length).toBeGreaterThan(0);
          for (const issue of validation.issues) {
            expect(issue.instancePath === '' || issue.instancePath.startsWith('/')).toBe(true);
            expect(typeof issue.keyword).toBe('string');
            expect(typeof issue.message).toBe('string');
          }
          expect(ctx.traces[0].error?.code).toBe('TOOL_SCHEMA_VALIDATION_FAILED');
        }
        const report = await withinHangGuard(runtime.endPlan(ctx), 'endPlan');
        expect(report.failures).toEqual([]);
        expect(tool.count('activate')).toBe(1);
        expect(tool.count('deactivate')).toBe(1);
      }),
      propertyParameters(400),
    );
    // The generators are aimed at the schemas: both branches were exercised.
    expect(valid).toBeGreaterThan(40);
    expect(invalid).toBeGreaterThan(40);
  });

  it('non-JSON inputs (undefined, NaN, BigInt, Map, typed arrays, null prototypes, sparse arrays…) end in a result or a documented error, and are not mutated', async () => {
    const anything = fc.anything({
      maxDepth: 3,
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
    });
    await fc.assert(
      fc.asyncProperty(schemaArbitrary(), anything, fc.boolean(), async (schema, input, checkOutput) => {
        const { runtime, tool } = echoRuntime(schema, checkOutput);
        const before = fc.stringify(input);
        const ctx = runtime.createPlan();
        const outcome = await withinHangGuard(settle(runtime.execute('prop.echo', input, ctx)), 'execute');
        if (outcome.status === 'rejected') failWith(outcome.reason);
        const result = outcome.value;
        expect(fc.stringify(input)).toBe(before);
        expect(ctx.traces).toHaveLength(1);
        expect(ctx.traces[0].success).toBe(result.ok);
        if (!result.ok) {
          // Invalid input, a strict output mismatch, or an output JSON cannot hold (BigInt).
          const documented = ToolSchemaValidationError.isInstance(result.error) || ToolExecutionError.isInstance(result.error);
          expect(documented ? 'documented' : result.error).toBe('documented');
          if (ToolExecutionError.isInstance(result.error)) expect(result.error.message).toMatch(/cannot be serialised to JSON/);
          if (ToolSchemaValidationError.isInstance(result.error) && result.error.direction === 'input') expect(tool.count('execute')).toBe(0);
        }
        await withinHangGuard(runtime.endPlan(ctx), 'endPlan');
      }),
      propertyParameters(300),
    );
  });

  it('schemas that cannot be compiled make the tool unavailable at discovery; executing it throws ToolRegistrationError with its trace, and the other tools still run', async () => {
    await fc.assert(
      fc.asyncProperty(invalidSchemaArbitrary, smallJson, async (schema, input) => {
        const broken = new TestTool({ name: 'prop.broken', inputSchema: schema });
        const healthy = new TestTool({ name: 'prop.healthy', inputSchema: { type: 'object' } });
        const logger = new RecordingLogger();
        const runtime = new ToolRuntime({ sources: [new InMemoryToolSource([broken, healthy])], validator, logger });
        const discovery = await withinHangGuard(runtime.discover(), 'discover');
        expect(discovery.tools.map((descriptor) => descriptor.name)).toEqual(['prop.healthy']);
        expect(discovery.unavailable.map((entry) => entry.name)).toEqual(['prop.broken']);
        expect(discovery.unavailable[0].reason).toMatch(/prop\.broken|schema/i);
        const ctx = runtime.createPlan();
        const outcome = await withinHangGuard(settle(runtime.execute('prop.broken', input, ctx)), 'execute');
        expect(outcome.status).toBe('rejected');
        const error = outcome.status === 'rejected' ? outcome.reason : undefined;
        expect(ToolRegistrationError.isInstance(error)).toBe(true);
        expect((error as { trace?: unknown }).trace).toBe(ctx.traces[0]);
        expect(ctx.traces[0]).toMatchObject({ toolName: 'prop.broken', success: false, error: { code: 'TOOL_REGISTRATION_FAILED' } });
        expect(broken.events).toEqual([]);
        const sibling = await runtime.execute('prop.healthy', { any: input }, ctx);
        expect(sibling.ok).toBe(true);
        const report = await runtime.endPlan(ctx);
        expect(report.deactivated).toEqual(['prop.healthy']);
      }),
      propertyParameters(60),
    );
  });
});
