// Scenario `auth/scope-retry-limit`: the server asks for a scope it never
// accepts. The client signs in, steps up once, and then gives up with the
// documented error instead of asking the person again and again.
import { CLIENT_METADATA_URL, discoverServer, runClient } from './conformance-client';

runClient({ oauth: { clientMetadataUrl: CLIENT_METADATA_URL } }, async ({ runtime }) => {
  let failure: unknown;
  try {
    await discoverServer(runtime);
  } catch (error) {
    failure = error;
  }
  const code = (failure as { code?: unknown } | undefined)?.code;
  if (code !== 'MCP_AUTH_FAILED') throw new Error(`expected discovery to fail with MCP_AUTH_FAILED, got ${String(code ?? failure ?? 'success')}`);
  return `discovery failed as documented: ${(failure as Error).message}`;
});
