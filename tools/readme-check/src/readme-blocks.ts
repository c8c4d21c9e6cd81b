// Finds the fenced code blocks of a Markdown file and sorts out the ones to
// check. A TypeScript or JavaScript block is a complete program that is
// type-checked and run, unless its fence says `typecheck-only` (it needs
// something the check cannot have: a server at a made-up URL, a package that
// does not exist yet). Every fence must name its language, so that no
// TypeScript can slip past the check in an unlabelled block.

/** Languages checked, by the word that opens the fence's info string. */
const CHECKED_LANGUAGES: Readonly<Record<string, CheckedLanguage>> = {
  ts: 'ts',
  typescript: 'ts',
  mts: 'ts',
  js: 'js',
  javascript: 'js',
  mjs: 'js',
  cjs: 'cjs',
};

/** The options a checked block's fence may carry after its language. */
export const FENCE_OPTIONS = ['typecheck-only'] as const;

/** `ts`: TypeScript, an ES module; `js`: JavaScript, an ES module; `cjs`: JavaScript, CommonJS. */
export type CheckedLanguage = 'ts' | 'js' | 'cjs';

/** `run`: type-checked, then run; `typecheck-only`: type-checked. */
export type BlockMode = 'run' | 'typecheck-only';

/** A TypeScript or JavaScript block to check. */
export interface CodeBlock {
  /** The Markdown file, as given. */
  readonly file: string;
  /** 1-based line of the opening fence; the code starts on the next line. */
  readonly line: number;
  readonly language: CheckedLanguage;
  readonly mode: BlockMode;
  readonly code: string;
}

/** A fence the check cannot accept. */
export interface FenceProblem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** What {@link extractBlocks} found. */
export interface ExtractedBlocks {
  /** The TypeScript and JavaScript blocks, in file order. */
  readonly blocks: CodeBlock[];
  /** Fences without a language, with an unknown option, or never closed. */
  readonly problems: FenceProblem[];
  /** How many fenced blocks the file has, checked or not. */
  readonly fenceCount: number;
}

const OPENING = /^( *)(`{3,}|~{3,})(.*)$/;

/**
 * The fenced code blocks of `markdown` (CommonMark fences: three or more
 * backticks or tildes, closed by at least as many of the same).
 */
export function extractBlocks(markdown: string, file: string): ExtractedBlocks {
  const lines = markdown.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  const problems: FenceProblem[] = [];
  let fenceCount = 0;
  for (let index = 0; index < lines.length; index++) {
    const opening = OPENING.exec(lines[index] ?? '');
    if (opening === null) continue;
    const [, indent = '', fence = '', rest = ''] = opening;
    // A backtick fence's info string cannot hold a backtick: such a line is inline code, not a fence.
    if (fence.startsWith('`') && rest.includes('`')) continue;
    fenceCount++;
    const line = index + 1;
    const closing = new RegExp(`^ {0,${Math.max(3, indent.length)}}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const body: string[] = [];
    let closed = false;
    for (index++; index < lines.length; index++) {
      const text = lines[index] ?? '';
      if (closing.test(text)) {
        closed = true;
        break;
      }
      body.push(stripIndent(text, indent.length));
    }
    if (!closed) {
      problems.push({ file, line, message: `the code block opened here is never closed; close it with ${fence}.` });
      break;
    }
    const words = rest
      .trim()
      .split(/\s+/)
      .filter((word) => word.length > 0);
    const [languageWord, ...options] = words;
    if (languageWord === undefined) {
      problems.push({
        file,
        line,
        message: `the code block has no language; name one (\`\`\`ts, \`\`\`sh, \`\`\`text for output …) so that TypeScript or JavaScript cannot escape the check.`,
      });
      continue;
    }
    const language = CHECKED_LANGUAGES[languageWord.toLowerCase()];
    if (language === undefined) continue;
    const unknown = options.filter((option) => !(FENCE_OPTIONS as readonly string[]).includes(option));
    if (unknown.length > 0) {
      problems.push({
        file,
        line,
        message: `unknown fence option ${unknown.map((option) => `'${option}'`).join(', ')}; the only one is ${FENCE_OPTIONS.map((option) => `'${option}'`).join(', ')}.`,
      });
      continue;
    }
    blocks.push({ file, line, language, mode: options.includes('typecheck-only') ? 'typecheck-only' : 'run', code: `${body.join('\n')}\n` });
  }
  return { blocks, problems, fenceCount };
}

function stripIndent(text: string, width: number): string {
  let strip = 0;
  while (strip < width && text[strip] === ' ') strip++;
  return text.slice(strip);
}
