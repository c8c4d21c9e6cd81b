// Output guardrails, built on the after-hook: secrets redacted with gitleaks'
// rules (and the service's own), and an opt-in heuristic check for
// instructions aimed at the model.
export { createSecretRedactionHook, DEFAULT_MAX_SCAN_CHARS, DEFAULT_SCAN_TIMEOUT_MS } from './secret-redaction-hook';
export type { SecretRedactionOptions } from './secret-redaction-hook';
export { createInstructionCheckHook, INSTRUCTION_SIGNS } from './instruction-check-hook';
export type { InstructionCheckOptions } from './instruction-check-hook';
export { SecretScanner, shannonEntropy } from './secret-scanner';
export type { SecretAllowlist, SecretFinding, SecretRule, SecretRuleSet } from './secret-scanner';
