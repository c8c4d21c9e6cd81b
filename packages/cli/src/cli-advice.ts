import { ToolSchemaValidationError, type SchemaIssue } from '@ca/schema';
import { safeMessage } from '@ca/domain';
import { didYouMean } from './suggest';
import { knownKeysAt } from './validate-document';

/** Where an error was met, which decides the advice: a flag of `tools run`, or a key of the plan file. */
export interface AdviceContext {
  readonly command: 'tools run' | 'plan';
  /** The configuration file as the user would type it, if there is one. */
  readonly configFile?: string;
  /** The schema of the tool's input, to suggest keys for an unknown one. */
  readonly inputSchema?: unknown;
}

type Rewrite = (message: string, error: CodedError, context: AdviceContext) => string;
type CodedError = Error & { readonly code?: string; readonly server?: string; readonly toolName?: string };

function configuration(context: AdviceContext): string {
  return context.configFile === undefined ? 'the configuration' : context.configFile;
}

function bindAdvice(context: AdviceContext): string {
  return context.command === 'tools run'
    ? `Bind one with --resource id=path (read-only; id=path:write allows changes), or under "resources" in ${configuration(context)}.`
    : `Bind one under "resources" in the plan file or in ${configuration(context)}.`;
}

function serverKey(error: CodedError, key: string): string {
  return `mcpServers.${error.server ?? '<server>'}.${key}`;
}

/**
 * The library's errors say what to change in code (`runtime.listTools()`,
 * `resourceFromPath({ … })`, a plan's policy object). Seen through the
 * command, the same advice is a flag or a key of a file. Each rewrite
 * replaces the library's advice sentence for one code; the rest of the
 * message (which tool, which plan, what happened) stays as it is.
 */
const REWRITES: Readonly<Record<string, Rewrite>> = {
  TOOL_NOT_FOUND: (message) =>
    message
      .replace(/ List the available tools with runtime\.listTools\(\)\./, " Run 'agents tools list' to see every tool.")
      .replace(/; list them with runtime\.listTools\(\)\./, ". Run 'agents tools list' to see them."),
  BUILTIN_NO_RESOURCE: (message, _error, context) => message.replace(/ Bind one with resourceFromPath\([^)]*\)\./, ` ${bindAdvice(context)}`),
  BUILTIN_PATH_OUTSIDE_RESOURCES: (message, _error, context) =>
    message.replace(
      / or bind the folder to the plan\./,
      context.command === 'tools run' ? ' or bind the folder with --resource id=path.' : ' or bind the folder under "resources" in the plan file.',
    ),
  BUILTIN_RESOURCE_READ_ONLY: (message, _error, context) => {
    const resource = /in resource "([^"]+)"/.exec(message)?.[1] ?? 'id';
    return message.replace(
      / Bind it with access: 'write' to allow changes\./,
      context.command === 'tools run'
        ? ` Bind it with --resource ${resource}=<path>:write to allow changes.`
        : ` Give resource "${resource}" "access": "write" (in the plan file's or ${configuration(context)}'s "resources") to allow changes.`,
    );
  },
  TOOL_ACCESS_DENIED: (message, _error, context) =>
    message
      .replace(
        /Run it in a plan whose policy has readOnly: false, or choose a tool that does not write\./,
        context.command === 'tools run'
          ? 'Run it without --read-only, or choose a tool that does not write.'
          : 'Set "policy": { "readOnly": false } in the plan file, or choose a tool that does not write (a step meant to be refused says "expect: refused").',
      )
      .replace(
        /Run it in a plan whose policy has network: 'allow', or choose a tool that is not openWorld\./,
        context.command === 'tools run'
          ? 'Run it without --no-network, or choose a tool that is not openWorld.'
          : 'Set "policy": { "network": "allow" } in the plan file, or choose a tool that is not openWorld (a step meant to be refused says "expect: refused").',
      ),
  TOOL_CHECKPOINT_REQUIRED: (message, _error, context) =>
    message.replace(
      /Run it in a plan whose policy has requireCheckpoint: false, or choose a tool that records undoable changes\./,
      context.command === 'tools run'
        ? 'Run it without --require-checkpoint, or choose a tool that records undoable changes.'
        : 'Set "policy": { "requireCheckpoint": false } in the plan file, or choose a tool that records undoable changes (a step meant to be refused says "expect: refused").',
    ),
  TOOL_CANCELLED: (message, _error, context) =>
    message
      .replace(/ The plan's cancellation token was cancelled; start a new plan \(or a new token\) to run it again\./, ' Run the command again to retry.')
      .replace(/ The plan's deadline passed; raise the plan's timeout if it needs longer\./, ' Raise "timeoutMs" of the plan file if it needs longer.')
      .replace(
        / Raise the timeout if the tool needs longer\./,
        context.command === 'tools run'
          ? ` Raise it with --timeout <ms> (or "runtime": { "defaultTimeoutMs" } in ${configuration(context)}) if the tool needs longer.`
          : ` Raise "timeoutMs" of the step (or "runtime": { "defaultTimeoutMs" } in ${configuration(context)}) if the tool needs longer.`,
      ),
  TOOL_APPROVAL_DENIED: (message, error, context) =>
    message
      .replace(/but nobody can be asked: no approval handler is configured, so/, 'but nobody can be asked (the command is not on a terminal), so')
      .replace(
        / Give the runtime an ApprovalHandler \(settings\.approvalHandler, or APPROVAL_HANDLER in the container; an INTERACTION_HANDLER there answers approvals too\), add an allow rule for the call, or change the plan's policy\.approval\./,
        context.command === 'tools run'
          ? ` Run it on a terminal to be asked, pass --approve '${error.toolName ?? '<tool>'}' (a glob), or add an allow rule (approval.rules in ${configuration(context)}, or --rules <file>).`
          : ` Run it on a terminal to be asked, pass --approve '${error.toolName ?? '<tool>'}' (a glob), pass --await-approval and answer with 'agents plan approve <plan-id>' from another terminal, or add an allow rule (approval.rules in ${configuration(context)}, or --rules <file>).`,
      )
      .replace(
        / Change the call, or the rule in the service's configuration\./,
        ` Change the call, or the rule (approval.rules or a rules file of ${configuration(context)}).`,
      )
      .replace(/ Answer sooner, or raise approvalTimeoutMs\./, ` Answer sooner, or raise approval.timeoutMs in ${configuration(context)}.`)
      .replace(/\(approvalTimeoutMs\)/, '(approval.timeoutMs)'),
  TOOL_EXECUTION_FAILED: (message) => message.replace(/ See the cause for details\./, ' Run the command with --verbose to see where it failed.'),
  TOOL_REGISTRATION_FAILED: (message, _error, context) =>
    message.replace(/\(e\.g\. with wrapTool from @ca\/adapters-wrapped\)/, `(e.g. with an entry under "wrapped" in ${configuration(context)})`),
  TOOL_ACTIVATION_FAILED: (message, error, context) => mcpServerAdvice(message, error, context),
  MCP_SERVER_START_FAILED: (message, error, context) => mcpServerAdvice(message, error, context),
  MCP_SERVER_EXITED: (message) =>
    message
      .replace(/ Start a new plan to open a new session\./, ' Run the command again to open a new session.')
      .replace(/; a new plan starts it again\./, '; running the command again starts it again.'),
  MCP_AUTH_REQUIRED: (message, error) =>
    message
      .replace(
        / Sign in ahead of time where one is \(McpToolSource\.authorize\), or use the client_credentials grant for a service\./,
        ` Sign in with 'agents mcp login ${error.server ?? '<server>'}' in a terminal, or give the server "oauth": { "grant": "client_credentials", … } for a service.`,
      )
      .replace(
        / Sign in ahead of time \(McpToolSource\.authorize\) to use the server without asking\./,
        ` Sign in with 'agents mcp login ${error.server ?? '<server>'}' in a terminal.`,
      ),
  MCP_CALL_TIMEOUT: (message, error, context) =>
    message
      .replace(/Raise callTimeoutMs for this server/, `Raise ${serverKey(error, 'callTimeoutMs')} in ${configuration(context)}`)
      .replace(/Raise maxTotalTimeoutMs for this server/, `Raise ${serverKey(error, 'maxTotalTimeoutMs')} in ${configuration(context)}`),
};

function mcpServerAdvice(message: string, error: CodedError, context: AdviceContext): string {
  const server = error.server ?? (error.cause as CodedError | undefined)?.server ?? /MCP server '([^']+)'/.exec(message)?.[1];
  return message.replace(/ of the server in the MCP configuration\./, ` of mcpServers.${server ?? '<server>'} in ${configuration(context)}.`);
}

/** An issue as the command prints it: `/text: is required`, `/txt: is not a known property. Did you mean 'text'?`. */
function describeIssue(issue: SchemaIssue, schema: unknown): string {
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.['additionalProperty'] === 'string') {
    const key = issue.params['additionalProperty'];
    const known = typeof schema === 'object' && schema !== null ? knownKeysAt(issue.schemaPath, schema, []) : [];
    return `${issue.instancePath}/${key}: is not a known property.${didYouMean(key, known)}`;
  }
  if (issue.keyword === 'required' && typeof issue.params?.['missingProperty'] === 'string') {
    return `${issue.instancePath}/${issue.params['missingProperty']}: is required`;
  }
  const where = issue.instancePath === '' ? '/' : issue.instancePath;
  return `${where}: ${issue.message.replace(/^\S*\s/, '')}`;
}

/** How many issues of an invalid input are listed. */
const ISSUES_SHOWN = 10;

/**
 * The code and the message to print for an error met through the command:
 * the library's advice replaced by the flag or key that does the same, and a
 * schema-invalid input listed issue by issue, each naming its field.
 */
export function explainError(error: unknown, context: AdviceContext): { readonly code: string; readonly message: string } {
  const { code, message } = adviseError(error, context);
  return { code: printable(code), message: printable(safeMessage(message)) };
}

/**
 * A server or a tool chose the text: no control characters (terminal escapes)
 * reach the output; newlines and tabs stay.
 */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\uFFFD');
}

function adviseError(error: unknown, context: AdviceContext): { readonly code: string; readonly message: string } {
  if (!(error instanceof Error) && (typeof error !== 'object' || error === null)) return { code: 'UNKNOWN', message: String(error) };
  const coded = error as CodedError;
  const code = typeof coded.code === 'string' ? coded.code : 'UNKNOWN';
  const message = typeof coded.message === 'string' ? coded.message : String(error);
  if (ToolSchemaValidationError.isInstance(error) && error.direction === 'input' && error.issues.length > 0) {
    const tool = error.toolName ?? 'the tool';
    const lines = error.issues.slice(0, ISSUES_SHOWN).map((issue) => `  ${describeIssue(issue, context.inputSchema)}`);
    const more = error.issues.length > ISSUES_SHOWN ? [`  … and ${error.issues.length - ISSUES_SHOWN} more`] : [];
    const source = context.command === 'tools run' ? '--input' : "The step's input";
    return {
      code,
      message: `${source} does not match the input schema of '${tool}':\n${[...new Set(lines), ...more].join('\n')}\nRun 'agents tools describe ${tool}' to see the schema.`,
    };
  }
  const rewrite = REWRITES[code];
  return { code, message: rewrite === undefined ? message : rewrite(message, coded, context) };
}

/** {@link explainError} for a code and a message met outside an error object (a discovery report). */
export function adviseMessage(code: string, message: string, context: AdviceContext, fields: { readonly server?: string } = {}): string {
  return explainError(Object.assign(new Error(message), { code, ...fields }), context).message;
}
