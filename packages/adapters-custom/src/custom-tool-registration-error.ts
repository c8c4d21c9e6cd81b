import { CaError, describeValue, messageOf } from '@ca/domain';

/**
 * Stable codes of {@link CustomToolRegistrationError}:
 * - `CUSTOM_TOOL_INVALID`: the definition is wrong (name, description,
 *   capability, a schema that does not compile, a missing `execute`, …), or
 *   the source's settings are;
 * - `CUSTOM_TOOL_DUPLICATE`: a source already holds a tool of that name.
 *
 * An unknown name asked of a source is `ToolNotFoundError` (`TOOL_NOT_FOUND`)
 * from `@ca/tool-lifecycle`, as for every source.
 */
export type CustomToolRegistrationErrorCode = 'CUSTOM_TOOL_INVALID' | 'CUSTOM_TOOL_DUPLICATE';

/** Where a definition comes from: `defineTool()`, a class registered under `CUSTOM_TOOL`, or a hand-written `ToolInstance`. */
export type CustomToolOrigin = 'defineTool' | 'class' | 'instance';

/** The fields of a custom tool that are checked one by one. */
export type CustomToolField =
  'description' | 'capability' | 'execute' | 'activate' | 'deactivate' | 'timeoutMs' | 'strictOutput' | 'version' | 'annotations' | 'inputSchema';

/** The settings of the source (or the argument of `registerCustomAdapter`) that are checked. */
export type CustomAdapterSetting = 'settings' | 'id' | 'tools' | 'container';

/** Where a second tool of a name came from, for `'duplicate'`. */
export type CustomToolDuplicateOrigin = 'tool' | 'class' | 'two-classes';

/** Fields every problem may carry. */
interface CommonOptions {
  /** The source the tool was registered with, when known. */
  readonly sourceId?: string;
}

/**
 * Options of {@link CustomToolRegistrationError}: the problem and its data.
 * The error composes the message (which tool, what is wrong, what to do).
 *
 * - `'invalid-setting'`: `createCustomAdapter` / `registerCustomAdapter` got a
 *   setting of the wrong type (`received` is the value);
 * - `'not-an-object'`: a definition that is not an object;
 * - `'invalid-name'`: a definition whose name is not a valid tool name;
 * - `'invalid-field'`: one of the checked fields is missing or has the wrong type;
 * - `'unknown-capability-field'`: `capability` has a field that does not exist (a typo);
 * - `'invalid-capability-value'`: a capability field that is not a boolean;
 * - `'schema-not-compiled'`: a schema that cannot be compiled (the compile error is the cause);
 * - `'wrong-source-kind'`: a `ToolInstance` whose descriptor is not of kind `'custom'`;
 * - `'classes-not-resolved'`: the container could not resolve the classes under `CUSTOM_TOOL` (its error is the cause);
 * - `'duplicate'`: the source already has a tool of that name (code `CUSTOM_TOOL_DUPLICATE`).
 */
export type CustomToolRegistrationErrorOptions = CommonOptions &
  (
    | { readonly problem: 'invalid-setting'; readonly setting: CustomAdapterSetting; readonly received: unknown }
    | { readonly problem: 'not-an-object'; readonly origin: CustomToolOrigin; readonly received: unknown }
    | { readonly problem: 'invalid-name'; readonly origin: CustomToolOrigin; readonly received: unknown }
    | { readonly problem: 'invalid-field'; readonly toolName: string; readonly field: CustomToolField; readonly received: unknown }
    | { readonly problem: 'unknown-capability-field'; readonly toolName: string; readonly field: string }
    | { readonly problem: 'invalid-capability-value'; readonly toolName: string; readonly field: string; readonly received: unknown }
    | { readonly problem: 'schema-not-compiled'; readonly toolName: string; readonly direction: 'input' | 'output'; readonly cause: unknown }
    | { readonly problem: 'wrong-source-kind'; readonly toolName: unknown; readonly kind: unknown; readonly sourceId: string }
    | { readonly problem: 'classes-not-resolved'; readonly sourceId: string; readonly cause: unknown }
    | { readonly problem: 'duplicate'; readonly toolName: string; readonly sourceId: string; readonly origin: CustomToolDuplicateOrigin }
  );

/** What went wrong, in {@link CustomToolRegistrationErrorOptions}' terms. */
export type CustomToolRegistrationProblem = CustomToolRegistrationErrorOptions['problem'];

/** The capability fields a custom tool may set. */
export const CAPABILITY_FIELDS: readonly string[] = Object.freeze(['writes', 'checkpointable', 'idempotent', 'destructive', 'openWorld']);

/** Longest deadline `setTimeout` honours. */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * A custom tool cannot be registered: raised by `defineTool`, by
 * `CustomToolSource.add`, by `createCustomAdapter` and — for class-based tools
 * resolved through dependency injection — by the source's first `discover`.
 * Never raised while a tool executes.
 *
 * Tell it apart with {@link CustomToolRegistrationError.isInstance} (inherited
 * from `CaError`) or `code`; both work across two installed copies of this
 * package, and `isInstance` also recognises errors of earlier releases.
 */
export class CustomToolRegistrationError extends CaError {
  declare readonly code: CustomToolRegistrationErrorCode;
  /** The source the tool was registered with, when known. */
  declare readonly sourceId?: string;
  /** What went wrong. */
  readonly problem: CustomToolRegistrationProblem;

  /**
   * @param options - The problem and its data; the message is built from them.
   * @throws Never.
   */
  constructor(options: CustomToolRegistrationErrorOptions) {
    const toolName = 'toolName' in options && typeof options.toolName === 'string' ? options.toolName : undefined;
    super(options.problem === 'duplicate' ? 'CUSTOM_TOOL_DUPLICATE' : 'CUSTOM_TOOL_INVALID', describeProblem(options), {
      ...(toolName === undefined ? {} : { toolName }),
      ...('cause' in options ? { cause: options.cause } : {}),
    });
    this.problem = options.problem;
    if (options.sourceId !== undefined) this.sourceId = options.sourceId;
  }
}

const ORIGINS: Readonly<Record<CustomToolOrigin, string>> = {
  defineTool: 'defineTool()',
  class: 'class-based custom tool',
  instance: 'custom tool instance',
};

const SETTINGS: Readonly<Record<CustomAdapterSetting, string>> = {
  settings: 'createCustomAdapter expects a settings object like { tools: [...] }',
  id: 'The id of a custom tool source must be a non-empty string',
  tools: 'expects tools to be an array of defineTool() results or CustomTool instances',
  container: 'registerCustomAdapter(container, settings) needs a tsyringe DependencyContainer (e.g. container.createChildContainer())',
};

/** What each field must be: the second half of "Custom tool 'x' …; got <value>." */
const FIELDS: Readonly<Record<CustomToolField, string>> = {
  description: 'needs a non-empty description (what it does, for a model and a person)',
  capability:
    'needs a capability saying what it may do, e.g. { writes: false } for a tool that only reads; fields left out fall on the conservative side (writes, not checkpointable)',
  execute: 'needs an execute(input, ctx) function',
  activate: 'has an activate that is not a function; make it a function or leave it out',
  deactivate: 'has a deactivate that is not a function; make it a function or leave it out',
  timeoutMs: `needs timeoutMs to be a positive number of milliseconds (at most ${MAX_TIMEOUT_MS}) or left out`,
  strictOutput: 'needs strictOutput to be true, false or left out',
  version: "needs version to be a string such as '1.2.0' or left out",
  annotations: 'needs annotations to be a plain JSON-serialisable object or left out',
  inputSchema: "needs an inputSchema (a JSON Schema; { type: 'object', properties: {} } for a tool without arguments)",
};

const DUPLICATES: Readonly<Record<CustomToolDuplicateOrigin, string>> = {
  tool: 'another tool has',
  class: 'a class registered under CUSTOM_TOOL has',
  'two-classes': 'two classes registered under CUSTOM_TOOL have',
};

function describeProblem(options: CustomToolRegistrationErrorOptions): string {
  const source = options.sourceId === undefined ? 'A custom tool source' : `Custom tool source '${options.sourceId}'`;
  switch (options.problem) {
    case 'invalid-setting':
      return options.setting === 'tools'
        ? `${source} ${SETTINGS.tools}; got ${describeValue(options.received)}.`
        : `${SETTINGS[options.setting]}; got ${describeValue(options.received)}.`;
    case 'not-an-object':
      return `${ORIGINS[options.origin]} expects an object with name, description, capability and execute; got ${describeValue(options.received)}.`;
    case 'invalid-name':
      return (
        `A ${ORIGINS[options.origin]} has the name ${describeValue(options.received)}, which is not a valid tool name: use 1–200 letters, digits, '_', '.', ':' or '-', ` +
        `starting with a letter, digit or '_'. A namespace such as 'custom.<team>.<tool>' keeps it unique across sources.`
      );
    case 'invalid-field':
      return `Custom tool '${options.toolName}' ${FIELDS[options.field]}; got ${describeValue(options.received)}.`;
    case 'unknown-capability-field':
      return `Custom tool '${options.toolName}' has an unknown capability field '${options.field}'; the fields are ${CAPABILITY_FIELDS.join(', ')} (check the spelling).`;
    case 'invalid-capability-value':
      return `Custom tool '${options.toolName}' has capability.${options.field} = ${describeValue(options.received)}; use true or false (or leave it out for the conservative default).`;
    case 'schema-not-compiled':
      return `Custom tool '${options.toolName}' has an ${options.direction}Schema that cannot be compiled: ${messageOf(options.cause)} Fix the ${options.direction}Schema and register the tool again.`;
    case 'wrong-source-kind':
      return `Tool ${describeValue(options.toolName)} has source kind ${describeValue(options.kind)}, not 'custom'; custom tool source '${options.sourceId}' serves only custom tools. Serve it from its own source, or wrap it with wrapTool() from @ca/adapters-wrapped.`;
    case 'classes-not-resolved':
      return `${source} could not resolve the class-based tools registered under CUSTOM_TOOL: ${messageOf(options.cause)}. Register every dependency they @inject in the container before the runtime discovers its tools.`;
    case 'duplicate':
      return `${source} cannot register tool '${options.toolName}': ${DUPLICATES[options.origin]} that name. Tool names must be unique; rename one of them (e.g. 'custom.<team>.${options.toolName}').`;
  }
}
