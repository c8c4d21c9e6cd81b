/**
 * A JSON Schema document (draft 2020-12 unless it declares another `$schema`).
 * Booleans are valid schemas: `true` accepts everything, `false` nothing.
 */
export type JsonSchema = boolean | { readonly [keyword: string]: unknown };

/** How a tool's input and output are checked by the runtime. */
export interface Validation {
  /** Schema the input must satisfy before the tool is called. */
  readonly inputSchema?: JsonSchema;
  /** Schema the output is checked against after the call. */
  readonly outputSchema?: JsonSchema;
  /**
   * When `true`, an output that does not satisfy `outputSchema` fails the
   * result. When `false` or absent it is logged as a warning and the result
   * is returned unchanged.
   */
  readonly strictOutput?: boolean;
}
