// Which client program answers which scenario of the suite's client mode.
// Every scenario of the released spec versions below must be here (a test
// says so when the suite gains one); extension scenarios are here when the
// adapter supports them.

/** The spec versions whose every client scenario must pass. */
export const REQUIRED_SPEC_VERSIONS: readonly string[] = ['2025-03-26', '2025-06-18', '2025-11-25'];

/** Extension scenarios the adapter supports, which must pass too. */
export const SUPPORTED_EXTENSIONS: readonly string[] = ['auth/client-credentials-jwt', 'auth/client-credentials-basic'];

/** Scenario → the client program (in `src/clients`, built to `dist/clients`) that plays it. */
export const CLIENT_PROGRAMS: Readonly<Record<string, string>> = {
  initialize: 'initialize',
  tools_call: 'tools-call',
  'elicitation-sep1034-client-defaults': 'elicitation-defaults',
  'sse-retry': 'sse-retry',
  'auth/metadata-default': 'sign-in',
  'auth/metadata-var1': 'sign-in',
  'auth/metadata-var2': 'sign-in',
  'auth/metadata-var3': 'sign-in',
  'auth/basic-cimd': 'sign-in',
  'auth/scope-from-www-authenticate': 'sign-in',
  'auth/scope-from-scopes-supported': 'sign-in',
  'auth/scope-omitted-when-undefined': 'sign-in',
  'auth/scope-step-up': 'sign-in',
  'auth/scope-retry-limit': 'scope-retry-limit',
  'auth/token-endpoint-auth-basic': 'sign-in',
  'auth/token-endpoint-auth-post': 'sign-in',
  'auth/token-endpoint-auth-none': 'sign-in',
  'auth/pre-registration': 'pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat': 'sign-in',
  'auth/2025-03-26-oauth-endpoint-fallback': 'sign-in',
  'auth/client-credentials-jwt': 'client-credentials-jwt',
  'auth/client-credentials-basic': 'client-credentials-basic',
};
