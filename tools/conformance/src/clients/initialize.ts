// Scenario `initialize`: the handshake a service's discovery makes, then the tool list.
import { discoverServer, runClient } from './conformance-client';

runClient({}, async ({ runtime }) => `${(await discoverServer(runtime)).length} tool(s) listed`);
