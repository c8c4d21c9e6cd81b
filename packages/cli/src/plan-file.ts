import path from 'node:path';
import type { BoundResource, PlanPolicy } from '@ca/tool-context';
import { CliError } from './cli-error';
import { bindResources, type ResourceEntry } from './config';
import { expandVariables } from './expand-variables';
import { readDocument } from './read-document';
import { validateDocument } from './validate-document';

/** One step of a plan file. */
export type PlanStep =
  | {
      readonly kind: 'tool';
      readonly id: string;
      readonly tool: string;
      readonly input: unknown;
      readonly timeoutMs?: number;
      readonly continueOnError: boolean;
      readonly expect: 'success' | 'failure' | 'refused';
    }
  | { readonly kind: 'checkpoint'; readonly id: string; readonly label: string }
  | { readonly kind: 'rollback'; readonly id: string; readonly label: string };

/** A plan file, read and validated. */
export interface PlanFile {
  readonly file: string;
  readonly id?: string;
  readonly description?: string;
  readonly policy: PlanPolicy;
  readonly timeoutMs?: number;
  /** Run through Restate (`agents plan run --durable`). */
  readonly durable?: boolean;
  readonly resources: readonly BoundResource[];
  readonly steps: readonly PlanStep[];
}

interface RawStep {
  id?: string;
  tool?: string;
  input?: unknown;
  timeoutMs?: number;
  continueOnError?: boolean;
  expect?: 'success' | 'failure' | 'refused';
  checkpoint?: string;
  rollback?: string;
}

/**
 * Reads a plan file (JSON or YAML): policy, bound resources, steps of tool +
 * input (or checkpoint / rollback markers). `${VAR}` is expanded from `env`.
 * @throws CliError (CLI_PLAN_NOT_FOUND, CLI_PLAN_INVALID) naming the file and the offending keys.
 */
export function loadPlanFile(file: string, options: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> }): PlanFile {
  const absolute = path.resolve(options.cwd, file);
  const raw = readDocument(absolute, { notFound: 'CLI_PLAN_NOT_FOUND', invalid: 'CLI_PLAN_INVALID' }, 'Plan file');
  let expanded: unknown;
  try {
    expanded = expandVariables(raw, options.env);
  } catch (error) {
    throw new CliError({ code: 'CLI_PLAN_INVALID', message: `Plan file ${absolute}: ${(error as Error).message}` });
  }
  validateDocument('plan', expanded, absolute, 'CLI_PLAN_INVALID');
  const document = expanded as {
    id?: string;
    description?: string;
    policy?: Partial<PlanPolicy>;
    timeoutMs?: number;
    durable?: boolean;
    resources?: ResourceEntry[];
    steps: RawStep[];
  };
  const labels = new Set<string>();
  const steps = document.steps.map((step, index): PlanStep => {
    const id = step.id ?? `step-${index + 1}`;
    if (step.checkpoint !== undefined) {
      labels.add(step.checkpoint);
      return { kind: 'checkpoint', id, label: step.checkpoint };
    }
    if (step.rollback !== undefined) {
      if (!labels.has(step.rollback)) {
        throw new CliError({
          code: 'CLI_PLAN_INVALID',
          message: `Plan file ${absolute}: /steps/${index}/rollback names checkpoint '${step.rollback}', which no earlier step sets. Add a { checkpoint: '${step.rollback}' } step before it.`,
        });
      }
      return { kind: 'rollback', id, label: step.rollback };
    }
    return {
      kind: 'tool',
      id,
      tool: step.tool as string,
      input: step.input ?? {},
      ...(step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs }),
      continueOnError: step.continueOnError ?? false,
      expect: step.expect ?? 'success',
    };
  });
  return {
    file: absolute,
    ...(document.id === undefined ? {} : { id: document.id }),
    ...(document.description === undefined ? {} : { description: document.description }),
    policy: {
      readOnly: document.policy?.readOnly ?? false,
      requireCheckpoint: document.policy?.requireCheckpoint ?? false,
      network: document.policy?.network ?? 'allow',
      ...(document.policy?.approval === undefined ? {} : { approval: document.policy.approval }),
    },
    ...(document.timeoutMs === undefined ? {} : { timeoutMs: document.timeoutMs }),
    ...(document.durable === undefined ? {} : { durable: document.durable }),
    resources: bindResources(document.resources ?? [], path.dirname(absolute), absolute),
    steps,
  };
}
