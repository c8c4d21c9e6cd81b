#!/usr/bin/env node
// Converts gitleaks' default configuration (config/gitleaks.toml of
// github.com/gitleaks/gitleaks, MIT) into the rule set the runtime's secret
// guardrail carries as data:
//   node tools/scripts/import-gitleaks-rules.mjs <gitleaks.toml> <commit>
// writes packages/tool-lifecycle/src/guardrails/gitleaks/gitleaks-rules.json.
// Kept: each rule's id, description, regex, secretGroup, entropy, keywords and
// the allowlists that judge a finding by itself (regexes with their target,
// stopwords); the global allowlist's regexes and stopwords. Left out: what
// needs a file path or a commit (rules with `path`, allowlists made only of
// paths or commits, and `condition = "AND"` allowlists that need one), which
// a tool's output does not have. Every regex must compile on re2js (RE2
// syntax, as Go's regexp): one that does not stops the import.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
// smol-toml is a root devDependency (the TOML parser nx uses too); re2js is the linear-time engine the guardrail runs the rules on.
const { parse } = require('smol-toml');
const { RE2JS } = require('re2js');

const [file, commit] = process.argv.slice(2);
if (file === undefined || commit === undefined || !/^[0-9a-f]{40}$/.test(commit)) {
  console.error('usage: node tools/scripts/import-gitleaks-rules.mjs <gitleaks.toml> <40-hex commit it comes from>');
  process.exit(2);
}
const config = parse(fs.readFileSync(file, 'utf8'));
const compiles = (pattern, where) => {
  try {
    RE2JS.compile(pattern);
  } catch (error) {
    throw new Error(`${where}: ${pattern} does not compile on re2js: ${error.message}`);
  }
  return pattern;
};
const allowlistOf = (allowlist, where) => {
  const regexes = (allowlist.regexes ?? []).map((pattern) => compiles(pattern, where));
  const stopwords = allowlist.stopwords ?? [];
  if (regexes.length === 0 && stopwords.length === 0) return undefined;
  if (allowlist.condition === 'AND' && ((allowlist.paths ?? []).length > 0 || (allowlist.commits ?? []).length > 0)) return undefined;
  return {
    ...(allowlist.regexTarget === undefined ? {} : { regexTarget: allowlist.regexTarget }),
    ...(regexes.length === 0 ? {} : { regexes }),
    ...(stopwords.length === 0 ? {} : { stopwords }),
  };
};
const rules = config.rules
  .filter((rule) => typeof rule.regex === 'string' && rule.path === undefined)
  .map((rule) => {
    const allowlists = (rule.allowlists ?? []).map((allowlist) => allowlistOf(allowlist, rule.id)).filter((allowlist) => allowlist !== undefined);
    return {
      id: rule.id,
      description: rule.description,
      regex: compiles(rule.regex, rule.id),
      ...(rule.secretGroup === undefined ? {} : { secretGroup: rule.secretGroup }),
      ...(rule.entropy === undefined ? {} : { entropy: rule.entropy }),
      keywords: rule.keywords ?? [],
      ...(allowlists.length === 0 ? {} : { allowlists }),
    };
  });
const output = {
  source: 'https://github.com/gitleaks/gitleaks/blob/' + commit + '/config/gitleaks.toml',
  license: 'MIT (see LICENSE beside this file)',
  minVersion: config.minVersion,
  allowlist: allowlistOf(config.allowlist, 'global allowlist'),
  rules,
};
const target = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'packages',
  'tool-lifecycle',
  'src',
  'guardrails',
  'gitleaks',
  'gitleaks-rules.json',
);
fs.writeFileSync(target, `${JSON.stringify(output, null, 1)}\n`);
console.log(`${rules.length} rules of ${config.rules.length} written to ${path.relative(process.cwd(), target)}`);
