/**
 * Tool names as JavaScript identifiers, both ways: `fs.read_file` →
 * `fs_read_file`, `github/create-issue` → `github_create_issue`. Every run of
 * characters an identifier cannot hold becomes one `_`; a leading digit gets
 * a `_` in front; a name whose identifier is taken gets `_2`, `_3`, … in the
 * order of the names (sorted), so the same catalog always maps the same way.
 */
export class ToolNames {
  private readonly byName = new Map<string, string>();
  private readonly byIdent = new Map<string, string>();

  constructor(names: readonly string[]) {
    for (const name of [...names].sort()) {
      const base = identifierOf(name);
      let ident = base;
      for (let n = 2; this.byIdent.has(ident) || RESERVED.has(ident); n++) ident = `${base}_${n}`;
      this.byName.set(name, ident);
      this.byIdent.set(ident, name);
    }
  }

  /** The identifier of a tool name, or undefined for a name not in the catalog. */
  identOf(name: string): string | undefined {
    return this.byName.get(name);
  }

  /** The tool name of an identifier, or undefined. */
  nameOf(ident: string): string | undefined {
    return this.byIdent.get(ident);
  }

  /** Whether `name` is one of the catalog's tool names. */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Identifiers and names, in the same order (sorted by name). */
  entries(): { readonly idents: string[]; readonly names: string[] } {
    const idents: string[] = [];
    const names: string[] = [];
    for (const [name, ident] of this.byName) {
      idents.push(ident);
      names.push(name);
    }
    return { idents, names };
  }
}

/** Names that would shadow what every object has: never an identifier of a tool. */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'then']);

/** The identifier a tool name maps to before collisions are resolved. */
export function identifierOf(name: string): string {
  let ident = String(name).replace(/[^A-Za-z0-9_$]+/g, '_');
  if (ident === '' || ident === '_') ident = '_tool';
  if (/^[0-9]/.test(ident)) ident = `_${ident}`;
  return ident;
}
