import { createSchemaValidator, ToolSchemaValidationError, type SchemaValidator } from '@ca/schema';
import type { BoundResource, PlanPolicy } from '@ca/tool-context';
import { capabilityInPlan, policyRefusal, ToolCheckpointRequiredError, type DiscoveryResult, type ToolDescriptor, type ToolRules } from '@ca/tool-lifecycle';
import { explainError, type AdviceContext } from './cli-advice';
import type { AgentsConfig } from './config';
import { describeConfigFile } from './config-sources';
import type { PlanFile } from './plan-file';
import { describeMissingTool } from './tool-lookup';

/** One thing that would go wrong in a plan, found before any step runs. */
export interface PlanProblem {
  /** 1-based number of the step, as the progress lines count them. */
  readonly step: number;
  /** The step's id. */
  readonly id: string;
  readonly tool: string;
  /** The code the runtime would fail the step with (`TOOL_NOT_FOUND`, `TOOL_ACCESS_DENIED`, …) or `STEP_NOT_REFUSED`. */
  readonly code: string;
  readonly message: string;
  /**
   * False for a step with `continueOnError: true`: the plan may go on past
   * it, so the problem is reported as a warning and does not stop the plan.
   */
  readonly blocking: boolean;
}

/** What {@link checkPlanFile} needs besides the plan. */
export interface PlanCheckOptions {
  /** Resources of the configuration; the plan file's own are added by id. */
  readonly baseResources: readonly BoundResource[];
  readonly config: AgentsConfig;
  /** Folder the command runs in, to name files as the user typed them. */
  readonly cwd: string;
  /** Compiles the tools' input schemas; default a new `createSchemaValidator()`. */
  readonly validator?: SchemaValidator;
  /** The rules the plan will run with: a step a deny rule refuses is a problem too. */
  readonly rules?: ToolRules;
}

/** What to change in a plan file, per rule of the runtime's policy step (`policyRefusal`, the one place that decides). */
function refusalOf(policy: PlanPolicy, descriptor: ToolDescriptor): { code: string; message: string } | undefined {
  const refusal = policyRefusal(descriptor, policy, 'plan-check');
  if (refusal === undefined) return undefined;
  const step = 'or, if the step is meant to be refused, say "expect: refused"';
  const name = descriptor.name;
  if (ToolCheckpointRequiredError.isInstance(refusal)) {
    return {
      code: refusal.code,
      message: `Tool '${name}' is not checkpointable, but the plan requires checkpoints. Set "policy": { "requireCheckpoint": false } in the plan file, choose a tool that records undoable changes, ${step}.`,
    };
  }
  return {
    code: refusal.code,
    message:
      refusal.rule === 'network'
        ? `Tool '${name}' reaches the network (open world), but the plan denies it. Set "policy": { "network": "allow" } in the plan file, choose a tool that stays off the network, ${step}.`
        : `Tool '${name}' writes, but the plan is read-only. Set "policy": { "readOnly": false } in the plan file, choose a tool that does not write, ${step}.`,
  };
}

/** A deny rule's refusal of a step, which the plan file's input lets the check see in full. */
function ruleRefusalOf(rules: ToolRules | undefined, tool: string, input: unknown): { code: string; message: string } | undefined {
  const verdict = rules?.decide(tool, input);
  if (verdict?.decision !== 'deny') return undefined;
  return {
    code: 'TOOL_APPROVAL_DENIED',
    message: `Rule '${verdict.rule}' refuses this call${verdict.reason === undefined ? '' : `: ${verdict.reason}`}. Change the step's input or the rule (approval.rules, or a rules file), or, if the step is meant to be refused, say "expect: refused".`,
  };
}

function describePolicy(policy: PlanPolicy): string {
  return [
    policy.readOnly ? 'read-only' : 'read-write',
    policy.requireCheckpoint ? 'checkpoints required' : 'no checkpoints required',
    policy.network === 'deny' ? 'no network' : 'network allowed',
  ].join(', ');
}

/**
 * Checks every step of a plan against the tools a runtime discovered,
 * without running anything: the tool exists (with suggestions when it does
 * not, and a word when its source is off); the plan's policy lets it run
 * (read-only against a writing tool, checkpoints against a tool that cannot
 * be undone) — or refuses it, when the step expects `refused`; its input,
 * which a plan file holds in full, is valid against the tool's input schema;
 * and a built-in tool's `resource` names a resource the plan binds.
 *
 * Returns every problem, in step order; an empty list means the plan can start.
 */
export function checkPlanFile(plan: PlanFile, discovery: DiscoveryResult, options: PlanCheckOptions): PlanProblem[] {
  const validator = options.validator ?? createSchemaValidator();
  const tools = new Map(discovery.tools.map((tool) => [tool.name, tool]));
  const resources = new Map(options.baseResources.map((resource) => [resource.id, resource]));
  for (const resource of plan.resources) resources.set(resource.id, resource);
  const configFile = options.config.file === undefined ? undefined : describeConfigFile(options.config, options.cwd);
  const problems: PlanProblem[] = [];
  for (const [index, step] of plan.steps.entries()) {
    if (step.kind !== 'tool') continue;
    const report = (code: string, message: string) =>
      problems.push({ step: index + 1, id: step.id, tool: step.tool, code, message, blocking: !step.continueOnError });
    const descriptor = tools.get(step.tool);
    if (descriptor === undefined) {
      const missing = describeMissingTool(step.tool, discovery, options.config, options.cwd);
      report(missing.code, missing.message);
      continue;
    }
    const refusal = refusalOf(plan.policy, descriptor) ?? ruleRefusalOf(options.rules, step.tool, step.input);
    if (step.expect === 'refused') {
      if (refusal === undefined) {
        const capability = capabilityInPlan(descriptor, plan.policy);
        report(
          'STEP_NOT_REFUSED',
          `The step expects to be refused, but the plan's policy (${describePolicy(plan.policy)}) lets '${step.tool}' run (in this plan it writes: ${capability.writes}, checkpointable: ${capability.checkpointable}${descriptor.sandboxed === undefined ? '' : ', in the kernel sandbox'}) and no deny rule refuses it. Change "expect" or the plan's "policy".`,
        );
      }
      continue;
    }
    if (step.expect === 'failure') continue;
    if (refusal !== undefined) {
      report(refusal.code, refusal.message);
      continue;
    }
    if (descriptor.inputSchema !== undefined) {
      let outcome;
      try {
        outcome = validator.compile(descriptor.inputSchema as never, { toolName: step.tool, direction: 'input' }).validate(step.input);
      } catch {
        // The runtime compiled this schema at discovery; a schema it could not compile makes the tool unavailable, not this step invalid.
        outcome = undefined;
      }
      if (outcome !== undefined && !outcome.valid) {
        const context: AdviceContext = { command: 'plan', inputSchema: descriptor.inputSchema, ...(configFile === undefined ? {} : { configFile }) };
        const error = new ToolSchemaValidationError({ direction: 'input', issues: outcome.issues, toolName: step.tool });
        report(error.code, explainError(error, context).message);
        continue;
      }
    }
    const resource = (step.input as { resource?: unknown } | null)?.resource;
    if (step.tool.startsWith('builtin.') && typeof resource === 'string' && !resources.has(resource)) {
      const bound = [...resources.keys()].map((id) => `'${id}'`).join(', ');
      report(
        'BUILTIN_NO_RESOURCE',
        `The input names resource '${resource}', which the plan does not bind (${bound.length > 0 ? `bound: ${bound}` : 'it binds none'}). Bind it under "resources" in the plan file or in ${configFile ?? 'a configuration file'}, or use one of the bound ids.`,
      );
    }
  }
  return problems;
}

/** The problems as the command prints them: `step 2 (write) builtin.fs.wirte: TOOL_NOT_FOUND: …`. */
export function formatProblems(problems: readonly PlanProblem[]): string {
  return problems
    .map(
      (problem) =>
        `  step ${problem.step} (${problem.id}) ${problem.tool}: ${problem.blocking ? '' : 'warning (continueOnError) '}${problem.code}: ${problem.message.replace(/\n/g, '\n    ')}\n`,
    )
    .join('');
}
