/** Options of the `adapter` generator; see schema.json. */
export interface AdapterGeneratorSchema {
  /** Kebab-case name: `jira` makes `@ca/adapters-jira` in `packages/adapters-jira`. */
  readonly name: string;
  /** One line for package.json and the README. */
  readonly description?: string;
}
