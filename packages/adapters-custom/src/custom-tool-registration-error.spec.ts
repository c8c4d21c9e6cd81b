import { CaError } from '@ca/domain';
import { SchemaCompileError, createSchemaValidator } from '@ca/schema';
import { CustomToolRegistrationError, type CustomToolRegistrationErrorOptions } from './index';

function compileError(): unknown {
  try {
    createSchemaValidator().compile({ type: 'strnig' } as never, { toolName: 'custom.bad', direction: 'input', trust: 'trusted' });
  } catch (error) {
    return error;
  }
  throw new Error('expected the schema not to compile');
}

describe('CustomToolRegistrationError', () => {
  it('extends CaError and inherits a working isInstance', () => {
    const error = new CustomToolRegistrationError({ problem: 'duplicate', toolName: 'custom.same', sourceId: 'custom:team', origin: 'tool' });
    expect(error).toBeInstanceOf(CaError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('CustomToolRegistrationError');
    expect(CustomToolRegistrationError.isInstance(error)).toBe(true);
    expect(CaError.isInstance(error)).toBe(true);
    expect(CustomToolRegistrationError.isInstance(new Error('plain'))).toBe(false);
    expect(
      CustomToolRegistrationError.isInstance(Object.assign(new Error('look-alike'), { code: 'CUSTOM_TOOL_INVALID', name: 'CustomToolRegistrationError' })),
    ).toBe(false);
  });

  it("recognises an error of another installed copy by the Symbol.for('ca.error.CustomToolRegistrationError') brand", () => {
    // What an older or other copy of the package made: a plain Error with the brand as an own property.
    const foreign = Object.assign(new Error("Custom tool source 'custom' cannot register tool 'x'"), { code: 'CUSTOM_TOOL_DUPLICATE' });
    Object.defineProperty(foreign, Symbol.for('ca.error.CustomToolRegistrationError'), { value: true });
    expect(foreign).not.toBeInstanceOf(CustomToolRegistrationError);
    expect(CustomToolRegistrationError.isInstance(foreign)).toBe(true);
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
      },
    );
    expect(CustomToolRegistrationError.isInstance(hostile)).toBe(false);
  });

  it.each<[string, CustomToolRegistrationErrorOptions, string, RegExp]>([
    [
      'a duplicate name',
      { problem: 'duplicate', toolName: 'billing.refund', sourceId: 'custom:billing', origin: 'two-classes' },
      'CUSTOM_TOOL_DUPLICATE',
      /^Custom tool source 'custom:billing' cannot register tool 'billing\.refund': two classes registered under CUSTOM_TOOL have that name\. .*rename one of them \(e\.g\. 'custom\.<team>\.billing\.refund'\)\.$/,
    ],
    [
      'a field of the wrong type',
      { problem: 'invalid-field', toolName: 'billing.refund', field: 'version', received: 3 },
      'CUSTOM_TOOL_INVALID',
      /^Custom tool 'billing\.refund' needs version to be a string such as '1\.2\.0' or left out; got number 3\.$/,
    ],
    [
      'a missing capability',
      { problem: 'invalid-field', toolName: 'billing.refund', field: 'capability', received: undefined },
      'CUSTOM_TOOL_INVALID',
      /'billing\.refund' needs a capability .*\{ writes: false \}.*; got undefined\.$/,
    ],
    [
      'a capability typo',
      { problem: 'unknown-capability-field', toolName: 'billing.refund', field: 'readOnly' },
      'CUSTOM_TOOL_INVALID',
      /'billing\.refund' has an unknown capability field 'readOnly'; the fields are writes, checkpointable, idempotent, destructive, openWorld \(check the spelling\)\.$/,
    ],
    [
      'a capability value that is not a boolean',
      { problem: 'invalid-capability-value', toolName: 'billing.refund', field: 'writes', received: 'no' },
      'CUSTOM_TOOL_INVALID',
      /capability\.writes = 'no'; use true or false/,
    ],
    [
      'a name that is not one',
      { problem: 'invalid-name', origin: 'class', received: 'has space' },
      'CUSTOM_TOOL_INVALID',
      /^A class-based custom tool has the name 'has space', which is not a valid tool name: .*'custom\.<team>\.<tool>'/,
    ],
    [
      'a definition that is not an object',
      { problem: 'not-an-object', origin: 'defineTool', received: [1] },
      'CUSTOM_TOOL_INVALID',
      /^defineTool\(\) expects an object with name, description, capability and execute; got an array\.$/,
    ],
    [
      'a tool of another kind',
      { problem: 'wrong-source-kind', toolName: 'mcp.fs.read', kind: 'mcp', sourceId: 'custom' },
      'CUSTOM_TOOL_INVALID',
      /^Tool 'mcp\.fs\.read' has source kind 'mcp', not 'custom'; custom tool source 'custom' serves only custom tools\. .*wrapTool\(\)/,
    ],
    [
      'settings that are not an object',
      { problem: 'invalid-setting', setting: 'settings', received: 'nope' },
      'CUSTOM_TOOL_INVALID',
      /^createCustomAdapter expects a settings object like \{ tools: \[\.\.\.\] \}; got 'nope'\.$/,
    ],
    [
      'tools that are not an array',
      { problem: 'invalid-setting', setting: 'tools', received: {}, sourceId: 'custom:x' },
      'CUSTOM_TOOL_INVALID',
      /^Custom tool source 'custom:x' expects tools to be an array .*; got an object\.$/,
    ],
  ])('builds its message from the fields: %s', (_label, options, code, message) => {
    const error = new CustomToolRegistrationError(options);
    expect(error.code).toBe(code);
    expect(error.problem).toBe(options.problem);
    expect(error.message).toMatch(message);
    if ('toolName' in options && typeof options.toolName === 'string') expect(error.toolName).toBe(options.toolName);
    else expect(error.toolName).toBeUndefined();
    if (options.sourceId === undefined) expect(error.sourceId).toBeUndefined();
    else expect(error.sourceId).toBe(options.sourceId);
  });

  it('keeps the schema compile error as the cause and quotes it', () => {
    const cause = compileError();
    expect(SchemaCompileError.isInstance(cause)).toBe(true);
    const error = new CustomToolRegistrationError({ problem: 'schema-not-compiled', toolName: 'custom.bad', direction: 'input', cause, sourceId: 'custom' });
    expect(error.cause).toBe(cause);
    expect(error.message).toBe(
      `Custom tool 'custom.bad' has an inputSchema that cannot be compiled: ${(cause as Error).message} Fix the inputSchema and register the tool again.`,
    );
    expect(error.toJSON()).toEqual({ name: 'CustomToolRegistrationError', code: 'CUSTOM_TOOL_INVALID', message: error.message, toolName: 'custom.bad' });
  });

  it('describes a hostile cause without throwing', () => {
    const cause = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        ownKeys() {
          throw new Error('trap');
        },
      },
    );
    const error = new CustomToolRegistrationError({ problem: 'classes-not-resolved', sourceId: 'custom:di', cause });
    expect(error.message).toMatch(
      /^Custom tool source 'custom:di' could not resolve the class-based tools registered under CUSTOM_TOOL: .*Register every dependency they @inject/,
    );
  });
});
