import { transform } from 'sucrase';

const OPEN = 'async function __program__() {\n';

/**
 * A program written in TypeScript, as JavaScript: its types removed by
 * sucrase (types only; no other transform, so lines and columns stay where
 * they were). The program is the body of an async function, so it is
 * stripped inside one. Code sucrase cannot parse is returned as it was: the
 * sandbox then reports the syntax error.
 */
export function stripTypes(code: string): string {
  try {
    const output = transform(`${OPEN}${code}\n}`, { transforms: ['typescript'], disableESTransforms: true }).code;
    const start = output.indexOf(OPEN);
    const end = output.lastIndexOf('}');
    if (start !== 0 || end < OPEN.length) return code;
    return output.slice(OPEN.length, end).replace(/\n$/, '');
  } catch {
    return code;
  }
}
