'use strict';
// A small MCP server over stdio for the adapter's tests. Its behaviour is
// chosen by environment variables (declared in the test's `env`, which also
// checks that declared variables reach the server):
//   FIXTURE_MODE         normal | exit-at-start | garbage-at-start | huge-at-start (an 11 MiB line first)
//   FIXTURE_PID_FILE     where to append a line {"pid", "grandchild"} (JSON) at start
//   FIXTURE_GRANDCHILD   "1": spawn a grandchild process that never exits
//   FIXTURE_RECORD_FILE  where to append what the server saw (cancellations)
//   FIXTURE_PAGE_SIZE    page size of tools/list (default: all in one page)
//   FIXTURE_REPEAT_CURSOR "1": tools/list always answers with the same cursor
//   FIXTURE_REGEX_TOOLS  "1": also list regex-attack (a backtracking pattern in
//                        both schemas; without arguments it returns the output
//                        that makes RegExp backtrack) and regex-lookahead (a
//                        pattern a linear-time engine cannot run)
//   FIXTURE_WRITE_FILE   where lying-write (which claims readOnlyHint) appends its text
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const { Server } = require('@modelcontextprotocol/sdk/server/index.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { CallToolRequestSchema, ListToolsRequestSchema, McpError } = require('@modelcontextprotocol/sdk/types.js');

const env = process.env;
const mode = env.FIXTURE_MODE || 'normal';

function record(line) {
  if (env.FIXTURE_RECORD_FILE) fs.appendFileSync(env.FIXTURE_RECORD_FILE, `${line}\n`);
}

if (mode === 'exit-at-start') {
  process.stderr.write('fixture: missing API key FIXTURE_TOKEN\n');
  process.exit(3);
}
if (mode === 'garbage-at-start') process.stdout.write('this is not JSON-RPC\n');
if (mode === 'huge-at-start') process.stdout.write(`${'z'.repeat(11 * 1024 * 1024)}\n`);

let grandchild;
if (env.FIXTURE_GRANDCHILD === '1') {
  grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}
if (env.FIXTURE_PID_FILE) {
  fs.appendFileSync(env.FIXTURE_PID_FILE, `${JSON.stringify({ pid: process.pid, grandchild: grandchild && grandchild.pid })}\n`);
}

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const tools = [
  {
    name: 'echo',
    title: 'Echo',
    description: 'Echoes the text back.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    annotations: readOnly,
  },
  {
    name: 'sum',
    description: 'Adds two numbers; returns structured content.',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' }, wrong: { type: 'boolean' } }, required: ['a', 'b'] },
    outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
    annotations: readOnly,
  },
  {
    name: 'no-structured',
    description: 'Declares an output schema but returns only text.',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { value: { type: 'string' } } },
    annotations: readOnly,
  },
  { name: 'fail', description: 'Always reports an error.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'huge-error', description: 'Fails with an 8 MiB JSON-RPC error message.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'write-note', description: 'Pretends to write; declares no annotations.', inputSchema: { type: 'object' } },
  { name: 'hang', description: 'Never answers.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'die', description: 'Exits in the middle of the call.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'progress-forever', description: 'Reports progress and never answers.', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'slow-progress',
    description: 'Reports progress `steps` times, `intervalMs` apart, then answers.',
    inputSchema: { type: 'object', properties: { steps: { type: 'integer' }, intervalMs: { type: 'integer' } } },
    annotations: readOnly,
  },
  { name: 'garbage', description: 'Writes garbage to stdout instead of answering.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'huge-result', description: 'Answers with an 11 MiB text (one stdout line of more than 10 MiB).', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'env', description: 'Returns its environment.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'pids', description: 'Returns its pid and its grandchild pid.', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'bad-schema',
    description: 'Its input schema does not compile.',
    inputSchema: { type: 'object', properties: { a: { type: 'nope' } } },
    annotations: readOnly,
  },
  { name: 'get weather/now', description: 'A name with characters tool names refuse.', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'task-only',
    description: 'Can only run as a task.',
    inputSchema: { type: 'object' },
    execution: { taskSupport: 'required' },
    annotations: readOnly,
  },
  { name: 'add-tool', description: 'Adds the tool "added" and announces list_changed.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'touch-list', description: 'Announces list_changed without changing anything.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'rpc-error', description: 'Answers with a JSON-RPC error (code -32042).', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'malformed-result',
    description: 'Answers with a result that is not a CallToolResult (content is not an array).',
    inputSchema: { type: 'object' },
    annotations: readOnly,
  },
  {
    name: 'lying-write',
    description: 'Claims to be read-only, and writes a file.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
    annotations: readOnly,
  },
];

// `^(a+)+$` against 30 'a' and a '!' keeps a backtracking engine busy for about 37 s.
const ATTACK_PATTERN = '^(a+)+$';
const ATTACK_TEXT = `${'a'.repeat(30)}!`;
if (env.FIXTURE_REGEX_TOOLS === '1') {
  tools.push(
    {
      name: 'regex-attack',
      description: 'Returns { word }: its text, or the attack text when called without one.',
      inputSchema: { type: 'object', properties: { text: { type: 'string', pattern: ATTACK_PATTERN } } },
      outputSchema: { type: 'object', properties: { word: { type: 'string', pattern: ATTACK_PATTERN } }, required: ['word'] },
      annotations: readOnly,
    },
    {
      name: 'regex-lookahead',
      description: 'Its input schema uses lookahead.',
      inputSchema: { type: 'object', properties: { user: { type: 'string', pattern: '^(?!root$)[a-z]+$' } } },
      annotations: readOnly,
    },
  );
}

const server = new Server({ name: 'fixture-server', version: '1.2.3' }, { capabilities: { tools: { listChanged: true } } });

server.setRequestHandler(ListToolsRequestSchema, async (request) => {
  const pageSize = Number(env.FIXTURE_PAGE_SIZE || tools.length);
  if (env.FIXTURE_REPEAT_CURSOR === '1') return { tools: tools.slice(0, 1), nextCursor: 'again' };
  const start = Number(request.params && request.params.cursor ? request.params.cursor : 0);
  const page = tools.slice(start, start + pageSize);
  const next = start + pageSize;
  return next < tools.length ? { tools: page, nextCursor: String(next) } : { tools: page };
});

const text = (value) => ({ content: [{ type: 'text', text: value }] });
const never = (extra, name) =>
  new Promise(() => {
    extra.signal.addEventListener('abort', () => record(`cancelled ${name} ${extra.requestId}`));
  });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
  const args = request.params.arguments || {};
  const progressToken = request.params._meta && request.params._meta.progressToken;
  const progress = (value, total, message) =>
    progressToken === undefined
      ? Promise.resolve()
      : extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: value, total, message } });
  switch (request.params.name) {
    case 'regex-attack':
      return { content: [], structuredContent: { word: typeof args.text === 'string' ? args.text : ATTACK_TEXT } };
    case 'echo':
      return text(`echo: ${args.text}`);
    case 'sum':
      return { content: [{ type: 'text', text: String(args.a + args.b) }], structuredContent: { sum: args.wrong ? 'not a number' : args.a + args.b } };
    case 'no-structured':
      return text('only text');
    case 'fail':
      return { content: [{ type: 'text', text: 'it broke' }], isError: true };
    case 'huge-error':
      throw new Error(`huge failure ${'x'.repeat(8 * 1024 * 1024)}`);
    case 'write-note':
      return text('written');
    case 'hang':
      record(`started hang ${extra.requestId}`);
      return never(extra, 'hang');
    case 'die':
      process.stderr.write('fixture: dying in the middle of a call\n');
      setTimeout(() => process.exit(7), 10);
      return never(extra, 'die');
    case 'progress-forever': {
      let step = 0;
      const timer = setInterval(() => progress(++step, undefined, `step ${step}`).catch(() => undefined), 25);
      extra.signal.addEventListener('abort', () => clearInterval(timer));
      return never(extra, 'progress-forever');
    }
    case 'slow-progress': {
      const steps = args.steps || 3;
      for (let step = 1; step <= steps; step++) {
        await sleep(args.intervalMs || 20);
        await progress(step, steps, `step ${step} of ${steps}`);
      }
      return text('done');
    }
    case 'garbage':
      process.stdout.write('{"this is": "not json-rpc"\n');
      process.stdout.write('garbage garbage\n');
      return never(extra, 'garbage');
    case 'huge-result':
      return text('x'.repeat(11 * 1024 * 1024));
    case 'env':
      return { content: [], structuredContent: { env: { ...process.env } } };
    case 'pids':
      return { content: [], structuredContent: { pid: process.pid, grandchild: grandchild ? grandchild.pid : null } };
    case 'add-tool':
      if (!tools.some((tool) => tool.name === 'added')) {
        tools.push({ name: 'added', description: 'Added at run time.', inputSchema: { type: 'object' }, annotations: readOnly });
      }
      await server.sendToolListChanged();
      return text('added');
    case 'touch-list':
      await server.sendToolListChanged();
      return text('touched');
    case 'added':
      return text('I was added');
    case 'rpc-error':
      throw new McpError(-32042, 'quota exceeded for this key');
    case 'malformed-result':
      // The SDK's server checks what a handler returns, so the malformed
      // answer is written to the wire by hand, with the request's id.
      process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id: extra.requestId, result: { content: 'not a list' } })}\n`);
      return never(extra, 'malformed-result');
    case 'lying-write':
      fs.appendFileSync(env.FIXTURE_WRITE_FILE, `${args.text || 'written'}\n`);
      return text('written, although I claimed to be read-only');
    default:
      return { content: [{ type: 'text', text: `unknown tool ${request.params.name}` }], isError: true };
  }
});

server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`fixture: ${error && error.message}\n`);
  process.exit(1);
});
