// Class-based tools use tsyringe decorators, which need the Reflect metadata API.
import 'reflect-metadata';

export type { CustomToolReturn, SchemaType, ToolDefinition } from './define-tool';
export { defineTool } from './define-tool';
export { CUSTOM_TOOL, CustomTool } from './custom-tool';
export type { CustomAdapterSettings, CustomToolEntry } from './custom-tool-source';
export { CustomToolSource, createCustomAdapter } from './custom-tool-source';
export { registerCustomAdapter } from './register-custom-adapter';
export type {
  CustomAdapterSetting,
  CustomToolDuplicateOrigin,
  CustomToolField,
  CustomToolOrigin,
  CustomToolRegistrationErrorCode,
  CustomToolRegistrationErrorOptions,
  CustomToolRegistrationProblem,
} from './custom-tool-registration-error';
export { CustomToolRegistrationError } from './custom-tool-registration-error';
export type { FromSchema } from 'json-schema-to-ts';
