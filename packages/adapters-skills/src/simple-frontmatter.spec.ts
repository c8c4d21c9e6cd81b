import * as fc from 'fast-check';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseSimpleFrontmatter } from './simple-frontmatter';
import { sharedFixture } from './skills.test-helper';

function frontmatterOf(file: string): string {
  const text = readFileSync(file, 'utf8');
  const end = text.indexOf('\n---', 4);
  return text.slice(4, end + 1);
}

describe('parseSimpleFrontmatter', () => {
  it('reads flat fields and one nested mapping like the yaml package does', () => {
    const text =
      'name: pdf-tools\ndescription: Extract text from PDFs. Use it for forms, tables (and more).\nmetadata:\n  author: me\n  owner-team: docs\nlicense: Apache-2.0  \n';
    expect(parseSimpleFrontmatter(text)).toEqual(parse(text));
    expect(parseSimpleFrontmatter(text)).toEqual({
      name: 'pdf-tools',
      description: 'Extract text from PDFs. Use it for forms, tables (and more).',
      metadata: { author: 'me', 'owner-team': 'docs' },
      license: 'Apache-2.0',
    });
  });

  it.each([
    ['a quoted value', 'name: "x"\n'],
    ['a block scalar', 'description: |-\n  text\n'],
    ['a comment', 'name: x # note\n'],
    ['a boolean', 'name: x\nflag: true\n'],
    ['a number', 'version: 1.2\n'],
    ['a null', 'name:\n'],
    ['a list', 'tags:\n  - a\n'],
    ['a flow list', 'tags: [a, b]\n'],
    ['a multi-line plain value', 'description: first\n  second\n'],
    ['a duplicate key', 'name: a\nname: b\n'],
    ['a colon followed by a space', 'description: Use when: it applies\n'],
    ['an anchor', 'name: &a x\n'],
    ['deeper nesting', 'metadata:\n  a:\n    b: c\n'],
    ['uneven nesting', 'metadata:\n  a: b\n   c: d\n'],
    ['a YAML keyword spelled yes', 'name: yes\n'],
  ])('leaves %s to the full parser', (_label, text) => {
    expect(parseSimpleFrontmatter(text)).toBeUndefined();
  });

  it('agrees with the yaml package on the frontmatter of every real skill it accepts', () => {
    const root = sharedFixture('agent-skills');
    let accepted = 0;
    for (const folder of readdirSync(root, { withFileTypes: true })) {
      if (!folder.isDirectory()) continue;
      const text = frontmatterOf(join(root, folder.name, 'SKILL.md'));
      const fast = parseSimpleFrontmatter(text);
      if (fast === undefined) continue;
      accepted++;
      expect(fast).toEqual(parse(text));
    }
    expect(accepted).toBeGreaterThan(0);
  });

  it('agrees with the yaml package on every generated document it accepts', () => {
    const key = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,12}$/);
    const value = fc.stringMatching(/^[A-Za-z][A-Za-z0-9 .,:;()'"#?!\-[\]{}&*|>%@`/]{0,40}$/);
    const line = fc.oneof(
      fc.tuple(key, value).map(([name, text]) => `${name}: ${text}`),
      fc
        .tuple(key, fc.array(fc.tuple(key, value), { minLength: 1, maxLength: 3 }))
        .map(([name, entries]) => `${name}:\n${entries.map(([inner, text]) => `  ${inner}: ${text}`).join('\n')}`),
      fc.constant(''),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 6 }), (lines) => {
        const text = `${lines.join('\n')}\n`;
        const fast = parseSimpleFrontmatter(text);
        if (fast === undefined) return;
        expect(fast).toEqual(parse(text) ?? {});
      }),
      { numRuns: 2000 },
    );
  });
});
