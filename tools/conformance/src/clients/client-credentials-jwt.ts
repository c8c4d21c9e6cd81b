// Extension scenario `auth/client-credentials-jwt`: a service signs in with
// a JWT assertion signed by its private key (private_key_jwt,
// client_credentials), no person involved; the key comes from the
// scenario's context, as a service's would come from its secret store.
import { discoverServer, runClient, scenarioContext } from './conformance-client';

const context = scenarioContext();
runClient(
  {
    oauth: {
      grant: 'client_credentials',
      clientId: context['client_id'] as string,
      privateKey: context['private_key_pem'] as string,
      ...(context['signing_algorithm'] === undefined ? {} : { signingAlgorithm: context['signing_algorithm'] }),
    },
  },
  async ({ runtime }) => `${(await discoverServer(runtime)).length} tool(s) listed`,
);
