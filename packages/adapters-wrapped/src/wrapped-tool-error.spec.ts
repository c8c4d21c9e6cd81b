import { CaError } from '@ca/domain';
import { WrappedToolError, type WrappedToolErrorOptions } from './index';

describe('WrappedToolError', () => {
  it('extends CaError and inherits a working isInstance', () => {
    const error = new WrappedToolError({ problem: 'duplicate-tool', sourceId: 'wrapped:team', toolName: 'team.read' });
    expect(error).toBeInstanceOf(CaError);
    expect(error.name).toBe('WrappedToolError');
    expect(WrappedToolError.isInstance(error)).toBe(true);
    expect(CaError.isInstance(error)).toBe(true);
    expect(WrappedToolError.isInstance(Object.assign(new Error('look-alike'), { name: 'WrappedToolError', code: 'WRAP_DUPLICATE_TOOL' }))).toBe(false);
    expect(WrappedToolError.isInstance(null)).toBe(false);
  });

  it("recognises an error of another installed copy by the Symbol.for('ca.error.WrappedToolError') brand", () => {
    // What an older or other copy of the package made: a plain Error with the brand as an own property.
    const foreign = Object.assign(new Error("Wrapped tool source 'wrapped' already has a tool 'x'"), { code: 'WRAP_DUPLICATE_TOOL' });
    Object.defineProperty(foreign, Symbol.for('ca.error.WrappedToolError'), { value: true });
    expect(foreign).not.toBeInstanceOf(WrappedToolError);
    expect(WrappedToolError.isInstance(foreign)).toBe(true);
  });

  it.each<[string, WrappedToolErrorOptions, string, string | undefined, RegExp]>([
    [
      'an option of the wrong type, on a wrapper',
      { problem: 'invalid-option', subject: { toolName: 'team.read', wrappedToolName: 'mcp.fs.read' }, option: 'version', expected: 'a string', received: 2 },
      'WRAP_INVALID_OPTIONS',
      'team.read',
      /^Wrapper 'team\.read' of tool 'mcp\.fs\.read': version must be a string; got number 2\.$/,
    ],
    [
      'an option of the wrong type, on a foreign tool',
      {
        problem: 'invalid-option',
        subject: { library: 'LangChain', toolName: 'lc.search' },
        option: 'strictOutput',
        expected: 'true or false',
        received: 'yes',
      },
      'WRAP_INVALID_OPTIONS',
      'lc.search',
      /^LangChain tool 'lc\.search': strictOutput must be true or false; got 'yes'\.$/,
    ],
    [
      'an unknown fixed argument',
      {
        problem: 'unknown-argument',
        subject: { toolName: 'team.read', wrappedToolName: 'mcp.fs.read' },
        option: 'fixedArguments',
        argument: 'recursive',
        accepted: ['path', 'limit'],
      },
      'WRAP_INVALID_OPTIONS',
      'team.read',
      /'recursive' in fixedArguments, but the tool accepts no such argument \(its inputSchema allows only 'path', 'limit'\)\. Remove it, or check the spelling\.$/,
    ],
    [
      'a tool of another kind in a wrapped source',
      { problem: 'wrong-source-kind', sourceId: 'wrapped:team', toolName: 'custom.raw', kind: 'custom' },
      'WRAP_INVALID_OPTIONS',
      'custom.raw',
      /^Wrapped tool source 'wrapped:team' got tool 'custom\.raw' of source kind 'custom'; it serves only wrapped tools\. Wrap it first/,
    ],
    [
      'a loosened capability',
      { problem: 'capability-loosened', toolName: 'safe.write', wrappedToolName: 'builtin.write', loosened: [{ field: 'writes', from: true, to: false }] },
      'WRAP_CAPABILITY_LOOSENED',
      'safe.write',
      /^Wrapper 'safe\.write' of tool 'builtin\.write' would loosen its capability \(writes: true → false\)\. .*Remove the change/,
    ],
    [
      'retry on a tool that is not idempotent',
      { problem: 'retry-not-idempotent', toolName: 'team.post', wrappedToolName: 'http.post' },
      'WRAP_RETRY_NOT_IDEMPOTENT',
      'team.post',
      /^Wrapper 'team\.post' of tool 'http\.post' asks for retry, but the tool is not idempotent.*idempotent: true/,
    ],
    [
      'a foreign schema that cannot be converted',
      {
        problem: 'schema-unconvertible',
        toolName: 'ai.opaque',
        library: 'AI SDK',
        direction: 'output',
        reason: 'not-json-schema',
        via: 'its toJSONSchema()',
        received: 7,
      },
      'WRAP_SCHEMA_UNCONVERTIBLE',
      'ai.opaque',
      /^The output schema of AI SDK tool 'ai\.opaque' was converted \(its toJSONSchema\(\)\) into number 7, not a JSON Schema\. Pass a converter as options\.toJsonSchema .*\(options\.outputSchema\)\.$/,
    ],
    [
      'a foreign tool without a name',
      { problem: 'invalid-foreign-name', library: 'function', received: undefined },
      'WRAP_FOREIGN_TOOL_INVALID',
      undefined,
      /^A function tool needs a valid name; got undefined\. .*given as options\.name\.$/,
    ],
    [
      'a foreign tool without a description',
      { problem: 'no-description', library: 'LangChain', toolName: 'lc.search' },
      'WRAP_FOREIGN_TOOL_INVALID',
      'lc.search',
      /^LangChain tool 'lc\.search' has no description; give one as options\.description/,
    ],
    [
      'an AI SDK tool without execute',
      { problem: 'not-callable', call: 'fromAiSdkTool', received: {}, toolName: 'ai.client' },
      'WRAP_FOREIGN_TOOL_INVALID',
      'ai.client',
      /^AI SDK tool 'ai\.client' has no execute function \(got an object\); only tools that run in this process can be wrapped/,
    ],
  ])('builds its code and message from the fields: %s', (_label, options, code, toolName, message) => {
    const error = new WrappedToolError(options);
    expect(error.code).toBe(code);
    expect(error.problem).toBe(options.problem);
    expect(error.toolName).toBe(toolName);
    expect(error.message).toMatch(message);
  });

  it('quotes and keeps the cause of a failed factory, and of a schema that does not compile', () => {
    const cause = new Error('server not reachable');
    const factory = new WrappedToolError({ problem: 'factory-failed', sourceId: 'wrapped:lazy', index: 2, cause });
    expect(factory.cause).toBe(cause);
    expect(factory.message).toBe(
      "Wrapped tool source 'wrapped:lazy': the factory at tools[2] failed: server not reachable. Fix it (or the source it reads from); the next discovery runs it again.",
    );
    const schema = new WrappedToolError({
      problem: 'schema-invalid',
      toolName: 'team.read',
      wrappedToolName: 'mcp.fs.read',
      schema: 'inner-input',
      cause: 'bad $ref',
    });
    expect(schema).toMatchObject({ code: 'WRAP_SCHEMA_INVALID', toolName: 'team.read', cause: 'bad $ref' });
    expect(schema.message).toMatch(
      /^Tool 'team\.read': the inputSchema of the tool it wraps, 'mcp\.fs\.read', cannot be compiled.*: bad \$ref Fix that tool's schema/,
    );
  });

  it('names the tool and the plan of an input that cannot be merged', () => {
    const error = new WrappedToolError({ problem: 'input-not-object', toolName: 'any.fixed', planId: 'plan-7', received: [1, 2], mapped: true });
    expect(error).toMatchObject({ code: 'WRAP_INPUT_NOT_OBJECT', toolName: 'any.fixed', planId: 'plan-7' });
    expect(error.message).toBe(
      "Tool 'any.fixed' in plan 'plan-7' got an array as input, but its fixed or default arguments need an object. Call it with an object, or make mapInput return one.",
    );
    expect(error.toJSON()).toEqual({
      name: 'WrappedToolError',
      code: 'WRAP_INPUT_NOT_OBJECT',
      message: error.message,
      toolName: 'any.fixed',
      planId: 'plan-7',
    });
  });
});
