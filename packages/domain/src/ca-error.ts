/** Options every {@link CaError} accepts besides its own fields. */
export interface CaErrorOptions {
  /** The tool concerned, when there is one. */
  readonly toolName?: string;
  /** The plan concerned, when there is one. */
  readonly planId?: string;
  /** The underlying error, per ES2022 `cause`. */
  readonly cause?: unknown;
}

/** What {@link CaError.toJSON} returns: the fields that identify an error, without its stack or cause. */
export interface CaErrorJson {
  readonly name: string;
  readonly code: string;
  readonly message: string;
  readonly toolName?: string;
  readonly planId?: string;
}

/** Constructors whose prototype already carries the brands of its class chain. */
const branded = new WeakSet<object>();

/**
 * The base of every error of the `@ca` packages: a stable `code`, the tool and
 * plan concerned, ES2022 `cause`, and a static {@link CaError.isInstance} that
 * every subclass inherits.
 *
 * **Brands.** Each class of the chain, from the one constructed up to
 * `CaError`, marks its prototype with `Symbol.for('ca.error.<ClassName>')`
 * (done once per class, from `new.target`). `X.isInstance(value)` checks for
 * X's symbol, so it recognises errors made by another installed copy of a
 * package — where `instanceof` fails — and errors of older releases, which
 * used the same symbols. Class names are the brand: a bundler that renames
 * classes (minification with mangled class names) must keep them.
 *
 * **Messages** are built by each subclass from its fields, so a throw site
 * passes data, not prose.
 */
export abstract class CaError extends Error {
  /** Stable code, the public contract for telling failures apart. */
  readonly code: string;
  /** The tool concerned, when known. */
  declare readonly toolName?: string;
  /** The plan concerned, when known. */
  declare readonly planId?: string;
  declare readonly cause?: unknown;

  /**
   * @param code - The stable code.
   * @param message - The whole message: what happened, where, and what to do.
   * @param options - Tool, plan and cause, when known.
   * @throws Never.
   */
  protected constructor(code: string, message: string, options: CaErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    if (options.toolName !== undefined) this.toolName = options.toolName;
    if (options.planId !== undefined) this.planId = options.planId;
    if (!branded.has(new.target)) brandClassChain(new.target);
  }

  /**
   * True when `value` is an error of this class (or a subclass), from this or
   * any other installed copy of its package.
   *
   * @throws Never: a hostile value (a Proxy whose traps throw) is simply not one.
   */
  static isInstance<T extends CaError>(this: { readonly prototype: T; readonly name: string }, value: unknown): value is T {
    return hasBrand(value, Symbol.for(`ca.error.${this.name}`));
  }

  /** The identifying fields, for logs and JSON output (no stack, no cause). */
  toJSON(): CaErrorJson {
    return {
      name: this.name,
      code: this.code,
      message: this.message,
      ...(this.toolName === undefined ? {} : { toolName: this.toolName }),
      ...(this.planId === undefined ? {} : { planId: this.planId }),
    };
  }
}

function brandClassChain(constructor: object): void {
  for (let current: object | null = constructor; current !== null && current !== Function.prototype; current = Object.getPrototypeOf(current)) {
    if (branded.has(current)) break;
    const { name, prototype } = current as { name: string; prototype: object };
    Object.defineProperty(prototype, Symbol.for(`ca.error.${name}`), { value: true });
    branded.add(current);
    if (current === CaError) break;
  }
}

/**
 * True when `value` carries the brand `symbol` (own or inherited).
 *
 * @throws Never.
 */
export function hasBrand(value: unknown, symbol: symbol): boolean {
  try {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[symbol] === true;
  } catch {
    return false;
  }
}
