/** Escapes one JSON Pointer segment (RFC 6901): `~` → `~0`, `/` → `~1`. */
export function escapePointerSegment(segment: string | number): string {
  const text = String(segment);
  return text.includes('~') || text.includes('/') ? text.replace(/~/g, '~0').replace(/\//g, '~1') : text;
}

/**
 * Splits a URI fragment holding a JSON Pointer (`/a/b~1c`, percent-encoded
 * as in a URI) into unescaped segments; `undefined` when it is no pointer.
 */
export function parsePointerFragment(fragment: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(fragment);
  } catch {
    return undefined;
  }
  if (decoded === '') return [];
  if (!decoded.startsWith('/')) return undefined;
  return decoded
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Resolves `reference` against `base` (RFC 3986, as WHATWG URL does it); `undefined` when it cannot be resolved. */
export function resolveUri(reference: string, base: string): string | undefined {
  try {
    return new URL(reference, base).href;
  } catch {
    return undefined;
  }
}

/** Splits `uri` at its first `#`: the document URI and the fragment (without `#`, `undefined` when absent). */
export function splitFragment(uri: string): [string, string | undefined] {
  const hash = uri.indexOf('#');
  return hash < 0 ? [uri, undefined] : [uri.slice(0, hash), uri.slice(hash + 1)];
}
