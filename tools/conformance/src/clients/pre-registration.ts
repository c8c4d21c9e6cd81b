// Scenario `auth/pre-registration`: the authorization server registers no
// clients; the configuration names the client registered beforehand (its
// id and secret, from the scenario's context) and a person signs in.
import { callTool, discoverServer, runClient, scenarioContext } from './conformance-client';

const context = scenarioContext();
runClient({ oauth: { clientId: context['client_id'] as string, clientSecret: context['client_secret'] as string } }, async ({ runtime }) => {
  await discoverServer(runtime);
  return JSON.stringify(await callTool(runtime, 'test-tool', {}));
});
