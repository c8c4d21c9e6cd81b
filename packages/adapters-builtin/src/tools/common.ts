/** Schema of the `path` input of the file tools. */
export const PATH_PROPERTY = Object.freeze({
  type: 'string',
  minLength: 1,
  description: 'Absolute path, or a path relative to the resource (by default the first file resource bound to the plan). Must stay inside a bound resource.',
});

/** Schema of the `resource` input of the file tools. */
export const RESOURCE_PROPERTY = Object.freeze({
  type: 'string',
  minLength: 1,
  description: 'Id of the bound resource that relative paths start from; default the first file resource of the plan.',
});
