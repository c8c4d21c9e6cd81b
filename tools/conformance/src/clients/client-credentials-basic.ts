// Extension scenario `auth/client-credentials-basic`: a service signs in
// with its client id and secret (client_credentials), no person involved.
import { discoverServer, runClient, scenarioContext } from './conformance-client';

const context = scenarioContext();
runClient(
  { oauth: { grant: 'client_credentials', clientId: context['client_id'] as string, clientSecret: context['client_secret'] as string } },
  async ({ runtime }) => `${(await discoverServer(runtime)).length} tool(s) listed`,
);
