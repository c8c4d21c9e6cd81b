'use strict';
// An MCP server over stdio whose one tool, `note-task`, can only run as a task
// (tasks/* through the SDK's task store): its result is the `_meta` of the
// tools/call that created the task, for the test that a task-based call
// carries the idempotency key like a plain one. It declares no annotations,
// so it counts as writing.
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = require('@modelcontextprotocol/sdk/experimental/tasks');

const server = new McpServer(
  { name: 'meta-echo-task', version: '1.0.0' },
  {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: new InMemoryTaskStore(),
    taskMessageQueue: new InMemoryTaskMessageQueue(),
  },
);
server.experimental.tasks.registerToolTask(
  'note-task',
  { description: 'Returns, as a task, the _meta of the request that created it.', execution: { taskSupport: 'required' } },
  {
    createTask: async (extra) => {
      const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 50 });
      await extra.taskStore.storeTaskResult(task.taskId, 'completed', { content: [], structuredContent: { meta: extra._meta || {} } });
      return { task };
    },
    getTask: async (extra) => extra.taskStore.getTask(extra.taskId),
    getTaskResult: async (extra) => extra.taskStore.getTaskResult(extra.taskId),
  },
);
server.connect(new StdioServerTransport()).catch((error) => {
  process.stderr.write(`meta-echo-task: ${error && error.message}\n`);
  process.exit(1);
});
