import rules from './gitleaks/gitleaks-rules.json';
import type { SecretRuleSet } from './secret-scanner';

/**
 * gitleaks' default rules (MIT, see `gitleaks/SOURCE.md`), as data. Loaded by
 * the secret guardrail on first use, not with the package.
 */
export const GITLEAKS_RULES: SecretRuleSet = rules as SecretRuleSet;
