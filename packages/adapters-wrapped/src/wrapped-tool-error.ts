import { CaError, describeValue, messageOf } from '@ca/domain';

/**
 * Stable codes of {@link WrappedToolError}. None is thrown while a tool
 * executes: most are raised when a wrapper, foreign tool or source is built,
 * `WRAP_FACTORY_FAILED` by `discover`, and `WRAP_INPUT_NOT_OBJECT` is
 * returned as a failed result:
 * - `WRAP_INVALID_OPTIONS`: an option has the wrong type or value (name, namespace, retry, …);
 * - `WRAP_CAPABILITY_LOOSENED`: the wrapper would claim less than the tool
 *   does (e.g. `writes: false` for a tool that writes);
 * - `WRAP_RETRY_NOT_IDEMPOTENT`: `retry` on a tool whose capability is not `idempotent`;
 * - `WRAP_SCHEMA_INVALID`: a schema (given, derived or converted) does not compile;
 * - `WRAP_SCHEMA_UNCONVERTIBLE`: a foreign tool's schema cannot be turned into JSON Schema;
 * - `WRAP_FOREIGN_TOOL_INVALID`: a foreign tool lacks what it needs (execute, invoke, a name, a description);
 * - `WRAP_DUPLICATE_TOOL`: a wrapped source already holds a tool of that name;
 * - `WRAP_FACTORY_FAILED`: a tool factory of a wrapped source threw (raised by `discover`);
 * - `WRAP_INPUT_NOT_OBJECT`: at call time, fixed or default arguments cannot be
 *   merged because the input is not an object; returned as a failed result.
 *
 * An unknown name asked of a wrapped source is `ToolNotFoundError`
 * (`TOOL_NOT_FOUND`) from `@ca/tool-lifecycle`, as for every source.
 */
export type WrappedToolErrorCode =
  | 'WRAP_INVALID_OPTIONS'
  | 'WRAP_CAPABILITY_LOOSENED'
  | 'WRAP_RETRY_NOT_IDEMPOTENT'
  | 'WRAP_SCHEMA_INVALID'
  | 'WRAP_SCHEMA_UNCONVERTIBLE'
  | 'WRAP_FOREIGN_TOOL_INVALID'
  | 'WRAP_DUPLICATE_TOOL'
  | 'WRAP_FACTORY_FAILED'
  | 'WRAP_INPUT_NOT_OBJECT';

/** The public functions of this package, for messages about their arguments. */
export type WrappedEntryPoint = 'wrapTool' | 'fromFunction' | 'fromAiSdkTool' | 'fromLangChainTool' | 'createWrappedAdapter' | 'registerWrappedAdapter';

/**
 * Whose option is wrong:
 * - a call of one of the package's functions (`{ call: 'wrapTool' }`);
 * - a wrapper of a tool (`{ wrappedToolName, toolName? }`; `toolName` is the wrapper's name, once known);
 * - a foreign tool (`{ library: 'AI SDK', toolName }`);
 * - a wrapped tool source (`{ sourceId }`).
 */
export type WrapSubject =
  | { readonly call: WrappedEntryPoint }
  | { readonly wrappedToolName: string; readonly toolName?: string }
  | { readonly library: string; readonly toolName: string }
  | { readonly sourceId: string };

/** Which schema did not compile: the wrapper's own, the one derived from the inner tool's, or the inner tool's itself. */
export type WrapSchemaRole = 'input' | 'output' | 'derived-input' | 'inner-input';

/** One capability field a wrapper tried to loosen, from the inner tool's value to the asked one. */
export interface LoosenedCapability {
  readonly field: string;
  readonly from: boolean;
  readonly to: boolean;
}

/**
 * Why a foreign schema could not be turned into JSON Schema:
 * - `'asynchronous'`: the conversion (`via`) returned a promise;
 * - `'not-json-schema'`: it produced something that is not a JSON Schema (`received`);
 * - `'conversion-failed'`: it threw (the error is the cause);
 * - `'converter-not-function'`: `options.toJsonSchema` is not a function (`received`);
 * - `'not-a-schema'`: the schema is neither an object nor a boolean (`received`);
 * - `'unsupported-library'`: a validation library's schema with none of the conversions this package knows.
 */
export type SchemaUnconvertibleReason =
  | { readonly reason: 'asynchronous'; readonly via: string }
  | { readonly reason: 'not-json-schema'; readonly via: string; readonly received: unknown }
  | { readonly reason: 'conversion-failed'; readonly via: string; readonly cause: unknown }
  | { readonly reason: 'converter-not-function'; readonly received: unknown }
  | { readonly reason: 'not-a-schema'; readonly received: unknown }
  | { readonly reason: 'unsupported-library' };

/**
 * Options of {@link WrappedToolError}: the problem and its data. The error
 * derives its code from the problem and composes the message.
 *
 * Code `WRAP_INVALID_OPTIONS`:
 * - `'invalid-option'`: `option` of `subject` is not `expected` (`received` is the value);
 * - `'unknown-capability-field'`: a capability field that does not exist (a typo);
 * - `'argument-fixed-and-default'`: one argument in both `fixedArguments` and `defaultArguments`;
 * - `'unknown-argument'`: a fixed or default argument the tool's `inputSchema` does not accept;
 * - `'name-too-long'`: namespace and name together exceed a tool name's length;
 * - `'not-a-tool'`: something that is not a `ToolInstance` where one is needed;
 * - `'wrong-source-kind'`: a wrapped source got a tool that is not of kind `'wrapped'`.
 *
 * Other codes, one problem each: `'capability-loosened'`, `'retry-not-idempotent'`,
 * `'schema-invalid'`, `'schema-unconvertible'`, `'duplicate-tool'`,
 * `'factory-failed'`, `'input-not-object'`; and `WRAP_FOREIGN_TOOL_INVALID` for
 * `'invalid-foreign-name'`, `'no-description'` and `'not-callable'`.
 */
export type WrappedToolErrorOptions =
  | { readonly problem: 'invalid-option'; readonly subject: WrapSubject; readonly option: string; readonly expected: string; readonly received: unknown }
  | { readonly problem: 'unknown-capability-field'; readonly subject: WrapSubject; readonly field: string }
  | { readonly problem: 'argument-fixed-and-default'; readonly subject: WrapSubject; readonly argument: string }
  | {
      readonly problem: 'unknown-argument';
      readonly subject: WrapSubject;
      readonly option: 'fixedArguments' | 'defaultArguments';
      readonly argument: string;
      readonly accepted: readonly string[];
    }
  | { readonly problem: 'name-too-long'; readonly wrappedToolName: string; readonly name: string }
  | { readonly problem: 'not-a-tool'; readonly subject: WrapSubject; readonly received: unknown }
  | { readonly problem: 'wrong-source-kind'; readonly sourceId: string; readonly toolName: unknown; readonly kind: unknown }
  | { readonly problem: 'capability-loosened'; readonly toolName: string; readonly wrappedToolName: string; readonly loosened: readonly LoosenedCapability[] }
  | { readonly problem: 'retry-not-idempotent'; readonly toolName: string; readonly wrappedToolName: string }
  | {
      readonly problem: 'schema-invalid';
      readonly toolName: string;
      readonly schema: WrapSchemaRole;
      readonly wrappedToolName?: string;
      readonly cause: unknown;
    }
  | ({
      readonly problem: 'schema-unconvertible';
      readonly toolName: string;
      readonly library: string;
      readonly direction: 'input' | 'output';
    } & SchemaUnconvertibleReason)
  | { readonly problem: 'invalid-foreign-name'; readonly library: string; readonly received: unknown }
  | { readonly problem: 'no-description'; readonly library: string; readonly toolName: string }
  | {
      readonly problem: 'not-callable';
      readonly call: 'fromFunction' | 'fromAiSdkTool' | 'fromLangChainTool';
      readonly received: unknown;
      readonly toolName?: string;
    }
  | { readonly problem: 'duplicate-tool'; readonly sourceId: string; readonly toolName: string }
  | { readonly problem: 'factory-failed'; readonly sourceId: string; readonly index: number; readonly cause: unknown }
  | { readonly problem: 'input-not-object'; readonly toolName: string; readonly planId: string; readonly received: unknown; readonly mapped: boolean };

/** What went wrong, in {@link WrappedToolErrorOptions}' terms. */
export type WrappedToolProblem = WrappedToolErrorOptions['problem'];

/**
 * A wrapper, a foreign-tool adapter or a wrapped source cannot be built as
 * asked (or, for `WRAP_INPUT_NOT_OBJECT`, one call's input cannot be merged).
 *
 * Tell it apart with {@link WrappedToolError.isInstance} (inherited from
 * `CaError`) or `code`; both work across two installed copies of this
 * package, and `isInstance` also recognises errors of earlier releases.
 */
export class WrappedToolError extends CaError {
  declare readonly code: WrappedToolErrorCode;
  /** What went wrong. */
  readonly problem: WrappedToolProblem;

  /**
   * @param options - The problem and its data; the code and message are built from them.
   * @throws Never.
   */
  constructor(options: WrappedToolErrorOptions) {
    const toolName = toolNameOf(options);
    super(CODES[options.problem], describeProblem(options), {
      ...(toolName === undefined ? {} : { toolName }),
      ...(options.problem === 'input-not-object' ? { planId: options.planId } : {}),
      ...('cause' in options ? { cause: options.cause } : {}),
    });
    this.problem = options.problem;
  }
}

const CODES: Readonly<Record<WrappedToolProblem, WrappedToolErrorCode>> = {
  'invalid-option': 'WRAP_INVALID_OPTIONS',
  'unknown-capability-field': 'WRAP_INVALID_OPTIONS',
  'argument-fixed-and-default': 'WRAP_INVALID_OPTIONS',
  'unknown-argument': 'WRAP_INVALID_OPTIONS',
  'name-too-long': 'WRAP_INVALID_OPTIONS',
  'not-a-tool': 'WRAP_INVALID_OPTIONS',
  'wrong-source-kind': 'WRAP_INVALID_OPTIONS',
  'capability-loosened': 'WRAP_CAPABILITY_LOOSENED',
  'retry-not-idempotent': 'WRAP_RETRY_NOT_IDEMPOTENT',
  'schema-invalid': 'WRAP_SCHEMA_INVALID',
  'schema-unconvertible': 'WRAP_SCHEMA_UNCONVERTIBLE',
  'invalid-foreign-name': 'WRAP_FOREIGN_TOOL_INVALID',
  'no-description': 'WRAP_FOREIGN_TOOL_INVALID',
  'not-callable': 'WRAP_FOREIGN_TOOL_INVALID',
  'duplicate-tool': 'WRAP_DUPLICATE_TOOL',
  'factory-failed': 'WRAP_FACTORY_FAILED',
  'input-not-object': 'WRAP_INPUT_NOT_OBJECT',
};

const CALLS: Readonly<Record<WrappedEntryPoint, string>> = {
  wrapTool: 'wrapTool(tool, options)',
  fromFunction: 'fromFunction(fn, options)',
  fromAiSdkTool: 'fromAiSdkTool(name, tool, options)',
  fromLangChainTool: 'fromLangChainTool(tool, options)',
  createWrappedAdapter: 'createWrappedAdapter(settings)',
  registerWrappedAdapter: 'registerWrappedAdapter(container, settings)',
};

const CONVERTER_ADVICE =
  "Pass a converter as options.toJsonSchema (e.g. toJsonSchema from '@langchain/core/utils/json_schema', or z.toJSONSchema), or give the schema as JSON Schema";

/** The tool the error is about: the wrapper or foreign tool, else the wrapped one. */
function toolNameOf(options: WrappedToolErrorOptions): string | undefined {
  const candidate: unknown =
    'subject' in options
      ? 'toolName' in options.subject
        ? options.subject.toolName
        : 'wrappedToolName' in options.subject
          ? options.subject.wrappedToolName
          : undefined
      : 'toolName' in options
        ? options.toolName
        : 'wrappedToolName' in options
          ? options.wrappedToolName
          : undefined;
  return typeof candidate === 'string' ? candidate : undefined;
}

function describeSubject(subject: WrapSubject): string {
  if ('call' in subject) return CALLS[subject.call];
  if ('sourceId' in subject) return `Wrapped tool source '${subject.sourceId}'`;
  if ('library' in subject) return `${subject.library} tool '${subject.toolName}'`;
  return subject.toolName === undefined ? `Wrapper of tool '${subject.wrappedToolName}'` : `Wrapper '${subject.toolName}' of tool '${subject.wrappedToolName}'`;
}

function quoted(names: readonly string[]): string {
  return names.map((name) => `'${name}'`).join(', ');
}

function describeProblem(options: WrappedToolErrorOptions): string {
  switch (options.problem) {
    case 'invalid-option':
      return `${describeSubject(options.subject)}: ${options.option} must be ${options.expected}; got ${describeValue(options.received)}.`;
    case 'unknown-capability-field':
      return `${describeSubject(options.subject)} has an unknown capability field '${options.field}'; the fields are writes, checkpointable, idempotent, destructive, openWorld (check the spelling).`;
    case 'argument-fixed-and-default':
      return `${describeSubject(options.subject)} has '${options.argument}' in both fixedArguments and defaultArguments; keep it in one of them.`;
    case 'unknown-argument':
      return `${describeSubject(options.subject)} has '${options.argument}' in ${options.option}, but the tool accepts no such argument (its inputSchema allows only ${quoted(options.accepted) || 'none'}). Remove it, or check the spelling.`;
    case 'name-too-long':
      return `Wrapper of tool '${options.wrappedToolName}' would be named '${options.name.slice(0, 80)}…', longer than a tool name may be (200 characters); choose a shorter name or namespace.`;
    case 'not-a-tool':
      return `${describeSubject(options.subject)} needs a ToolInstance (with a descriptor and execute()); got ${describeValue(options.received)}. Make one of a plain function with fromFunction() (or fromAiSdkTool(), fromLangChainTool()), or wrap a tool with wrapTool().`;
    case 'wrong-source-kind':
      return `Wrapped tool source '${options.sourceId}' got tool ${describeValue(options.toolName)} of source kind ${describeValue(options.kind)}; it serves only wrapped tools. Wrap it first: wrapTool(tool, { namespace: '…' }).`;
    case 'capability-loosened': {
      const changes = options.loosened.map(({ field, from, to }) => `${field}: ${from} → ${to}`).join(', ');
      return `Wrapper '${options.toolName}' of tool '${options.wrappedToolName}' would loosen its capability (${changes}). A wrapper may only make a capability stricter; a tool that writes stays a writing tool. Remove the change, or wrap a tool that really has that capability.`;
    }
    case 'retry-not-idempotent':
      return `Wrapper '${options.toolName}' of tool '${options.wrappedToolName}' asks for retry, but the tool is not idempotent: a retry could repeat an effect that already happened. Only retry tools whose capability has idempotent: true (declare it where the tool is defined, if it is true).`;
    case 'schema-invalid':
      return describeSchemaInvalid(options);
    case 'schema-unconvertible':
      return `The ${options.direction} schema of ${options.library} tool '${options.toolName}' ${describeUnconvertible(options)} ${CONVERTER_ADVICE} (options.${options.direction}Schema).`;
    case 'invalid-foreign-name':
      return `A ${options.library} tool needs a valid name; got ${describeValue(options.received)}. Use 1–200 letters, digits, '_', '.', ':' or '-' (e.g. 'ai.weather'), given as options.name.`;
    case 'no-description':
      return `${options.library} tool '${options.toolName}' has no description; give one as options.description (models choose tools by it).`;
    case 'not-callable':
      return describeNotCallable(options);
    case 'duplicate-tool':
      return `Wrapped tool source '${options.sourceId}' already has a tool '${options.toolName}'; give one of them another name (wrapTool's name or namespace option).`;
    case 'factory-failed':
      return `Wrapped tool source '${options.sourceId}': the factory at tools[${options.index}] failed: ${messageOf(options.cause)}. Fix it (or the source it reads from); the next discovery runs it again.`;
    case 'input-not-object':
      return `Tool '${options.toolName}' in plan '${options.planId}' got ${describeValue(options.received)} as input, but its fixed or default arguments need an object. Call it with an object${options.mapped ? ', or make mapInput return one' : ''}.`;
  }
}

function describeSchemaInvalid(options: Extract<WrappedToolErrorOptions, { problem: 'schema-invalid' }>): string {
  const detail = messageOf(options.cause);
  const inner = options.wrappedToolName ?? 'the inner tool';
  switch (options.schema) {
    case 'input':
    case 'output':
      return `Tool '${options.toolName}': its ${options.schema}Schema cannot be compiled: ${detail} Give a schema that compiles (JSON Schema, draft 2020-12 unless $schema says otherwise).`;
    case 'derived-input':
      return `Tool '${options.toolName}': the inputSchema derived from tool '${inner}' (less fixed arguments) cannot be compiled: ${detail} Give the wrapper its own inputSchema.`;
    case 'inner-input':
      return `Tool '${options.toolName}': the inputSchema of the tool it wraps, '${inner}', cannot be compiled, so the input the wrapper builds cannot be checked: ${detail} Fix that tool's schema, or wrap it without mapInput, fixedArguments, defaultArguments and inputSchema.`;
  }
}

function describeUnconvertible(options: SchemaUnconvertibleReason): string {
  switch (options.reason) {
    case 'asynchronous':
      return `is only available asynchronously (${options.via} returned a promise).`;
    case 'not-json-schema':
      return `was converted (${options.via}) into ${describeValue(options.received)}, not a JSON Schema.`;
    case 'conversion-failed':
      return `cannot be converted to JSON Schema (${options.via} failed: ${messageOf(options.cause)}).`;
    case 'converter-not-function':
      return `came with options.toJsonSchema ${describeValue(options.received)}, which is not a function.`;
    case 'not-a-schema':
      return `is ${describeValue(options.received)}.`;
    case 'unsupported-library':
      return 'is a validation-library schema this package cannot convert by itself (no jsonSchema, ~standard.jsonSchema or toJSONSchema()).';
  }
}

function describeNotCallable(options: Extract<WrappedToolErrorOptions, { problem: 'not-callable' }>): string {
  switch (options.call) {
    case 'fromFunction':
      return `${CALLS.fromFunction} expects a function; got ${describeValue(options.received)}.`;
    case 'fromLangChainTool':
      return `${CALLS.fromLangChainTool} expects a LangChain tool with an invoke() method; got ${describeValue(options.received)}.`;
    case 'fromAiSdkTool':
      return `AI SDK tool ${describeValue(options.toolName)} has no execute function (got ${describeValue(options.received)}); only tools that run in this process can be wrapped, not provider-executed or client-side ones.`;
  }
}
