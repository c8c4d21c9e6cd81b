// Scenario `sse-retry`: the server closes the stream of a tool call before
// answering; the client reconnects after the `retry` delay it was given and
// gets the answer on the new stream (SEP-1699).
import { callTool, discoverServer, runClient } from './conformance-client';

runClient({}, async ({ runtime }) => {
  await discoverServer(runtime);
  return JSON.stringify(await callTool(runtime, 'test_reconnection', {}));
});
