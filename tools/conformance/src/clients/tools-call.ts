// Scenario `tools_call`: a tool called in a plan with the arguments its schema asks for.
import { callTool, discoverServer, runClient } from './conformance-client';

runClient({}, async ({ runtime }) => {
  const tools = await discoverServer(runtime);
  if (!tools.includes('mcp.conformance.add_numbers')) throw new Error(`the server did not list add_numbers: ${tools.join(', ')}`);
  const output = await callTool(runtime, 'add_numbers', { a: 17, b: 25 });
  if (!String(output).includes('42')) throw new Error(`add_numbers answered ${JSON.stringify(output)}`);
  return String(output);
});
