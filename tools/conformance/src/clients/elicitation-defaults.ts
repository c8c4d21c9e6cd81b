// Scenario `elicitation-sep1034-client-defaults`: the server asks a form
// whose fields all have defaults; the person submits it without filling in
// a field, and the server must receive the defaults (SEP-1034).
import { callTool, discoverServer, runClient } from './conformance-client';

runClient({}, async ({ runtime }) => {
  await discoverServer(runtime);
  return JSON.stringify(await callTool(runtime, 'test_client_elicitation_defaults', {}));
});
