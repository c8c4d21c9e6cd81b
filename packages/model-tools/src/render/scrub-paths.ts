/** What stands for a host path that is not inside the plan's resources. */
export const HIDDEN_PATH = '<path outside the plan>';

// An absolute POSIX path not glued to a word, a URL's "//" or a scheme.
const ABSOLUTE_PATH = /(?<![A-Za-z0-9_.~:/@%-])\/(?:[^\s'"`<>|;,:()[\]{}*?]+)/g;
const FILE_URL = /file:\/\/[^\s'"`<>]*/gi;

/**
 * Replaces every absolute path in `text` that is not one of `allowedRoots` or
 * inside one with {@link HIDDEN_PATH}, and `file:` URLs likewise: what a
 * model reads names no place on the host beyond the plan's resources.
 * @throws Never.
 */
export function scrubPaths(text: string, allowedRoots: readonly string[]): string {
  const inside = (path: string): boolean => allowedRoots.some((root) => path === root || path.startsWith(root.endsWith('/') ? root : `${root}/`));
  return text
    .replace(FILE_URL, (url) => {
      let path: string;
      try {
        path = decodeURIComponent(new URL(url).pathname);
      } catch {
        return HIDDEN_PATH;
      }
      return inside(path) ? url : HIDDEN_PATH;
    })
    .replace(ABSOLUTE_PATH, (path) => (inside(path.replace(/[.]+$/, '')) ? path : HIDDEN_PATH));
}
