// The authorization code scenarios (metadata discovery, scope selection,
// token endpoint authentication, client ID metadata documents, the
// 2025-03-26 fallbacks): `oauth` with its defaults plus the address of the
// client's metadata document, which the adapter uses as the client id only
// where the authorization server says it accepts one (`auth/basic-cimd`);
// elsewhere it registers dynamically. A person signs in when the server asks
// — at connect, or later for a request (`auth/scope-step-up`).
import { CLIENT_METADATA_URL, callTool, discoverServer, runClient } from './conformance-client';

runClient({ oauth: { clientMetadataUrl: CLIENT_METADATA_URL } }, async ({ runtime }) => {
  const tools = await discoverServer(runtime);
  if (!tools.includes('mcp.conformance.test-tool')) throw new Error(`the server did not list test-tool: ${tools.join(', ')}`);
  return JSON.stringify(await callTool(runtime, 'test-tool', {}));
});
