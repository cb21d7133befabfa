// Synthesizes the stack the way `cdk synth` does (cdk.json's context, feature flags included), for the infra tests
// and the bundle benchmark. Without bundling it takes about a second; with bundling, esbuild runs per function.
// The root stack and its feature stacks are also given as one template (`template`), each nested stack's parameters
// and outputs replaced by what they carry, so that tests check the deployment's resources wherever they live.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BundlingChoices, ENTRY_FILE, lambdaBundling } from '../../infra/bundling.ts';
import { type Deployment, loadDeployment } from '../../infra/settings.ts';
import { ControlPlaneStack } from '../../infra/stack.ts';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The context of cdk.json (feature flags, default config file). */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface SynthOptions {
  /** Config file relative to the project root (default: cdk.json's `config`, i.e. config/prod.toml). */
  configFile?: string;
  /** AWS settings as CDK context (e.g. { dbMaxAcu: 8 }). */
  context?: Record<string, unknown>;
  /** Run esbuild (default false: assets are left unbundled, which is what template assertions need). */
  bundle?: boolean;
  sourceMaps?: boolean;
  /** Cloud assembly directory (default: a fresh temporary directory). */
  outdir?: string;
  /** As `-c samLocal=true`: the template `sam local start-api` runs (see infra/stack.ts). */
  samLocal?: boolean;
}

/** One CloudFormation stack of the deployment: the root stack or a feature's nested stack. */
export interface SynthesizedStack {
  /** Its construct path ("AgentControlPlane", "AgentControlPlane/RequestsStack"). */
  path: string;
  /** Its nested stack resource's logical ID in the root template (none for the root stack). */
  logicalId?: string;
  template: CfnTemplate;
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, { Value: unknown }>;
  [key: string]: unknown;
}

interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  [key: string]: unknown;
}

export interface Synthesized {
  app: App;
  stack: ControlPlaneStack;
  deployment: Deployment;
  /** The root stack and its nested stacks as one template (see the top of this file). */
  template: Template;
  /** The root stack's own template, as CloudFormation gets it. */
  root: Template;
  /** The root stack first, then each nested stack. */
  stacks: SynthesizedStack[];
  /** Every synthesized template as text (for "this string must not appear" checks). */
  templateText: string;
  outdir: string;
}

export function synth(options: SynthOptions = {}): Synthesized {
  const base = cdkJsonContext();
  // As the CLI does: asset paths in the template metadata (sam local and the bundle test read them).
  const context: Record<string, unknown> = {
    ...base,
    'aws:cdk:enable-asset-metadata': true,
    ...options.context,
  };
  // CDK skips asset bundling for stacks not in this list.
  if (!options.bundle) context['aws:cdk:bundling-stacks'] = [];
  const app = new App({ context, ...(options.outdir ? { outdir: options.outdir } : {}) });
  const configFile = options.configFile ?? String(base.config);
  const deployment = loadDeployment(resolve(PROJECT_ROOT, configFile), context);
  const stack = new ControlPlaneStack(app, deployment.aws.stack_name, {
    deployment,
    projectRoot: PROJECT_ROOT,
    sourceMaps: options.sourceMaps ?? true,
    ...(options.samLocal ? { samLocal: true } : {}),
  });
  const root = Template.fromStack(stack);
  const stacks: SynthesizedStack[] = [
    { path: stack.node.path, template: root.toJSON() as CfnTemplate },
    ...stack.node
      .findAll()
      .filter((construct): construct is NestedStack => NestedStack.isNestedStack(construct))
      .map((nested) => ({
        path: nested.node.path,
        logicalId: stack.getLogicalId(nested.nestedStackResource!),
        template: Template.fromStack(nested).toJSON() as CfnTemplate,
      })),
  ];
  const assembly = app.synth();
  return {
    app,
    stack,
    deployment,
    template: Template.fromJSON(flatten(stacks)),
    root,
    stacks,
    templateText: stacks.map((synthesized) => JSON.stringify(synthesized.template)).join('\n'),
    outdir: assembly.directory,
  };
}

/**
 * Bundles the one function `choices.entry` as the stack bundles each (a NodejsFunction of its own stack, in the cloud
 * assembly `outdir`) and returns the directory of its bundle.
 */
export function bundleFunction(outdir: string, choices: Omit<BundlingChoices, 'stagingDir'>): string {
  const app = new App({ context: cdkJsonContext(), outdir });
  new NodejsFunction(new Stack(app, 'OneFunction'), 'Function', {
    entry: choices.entry,
    handler: 'handler',
    runtime: lambda.Runtime.NODEJS_24_X,
    architecture: lambda.Architecture.ARM_64,
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
    bundling: lambdaBundling({ ...choices, stagingDir: outdir }),
  });
  const assembly = app.synth();
  const [asset] = readdirSync(assembly.directory).filter((name) => name.startsWith('asset.'));
  if (!asset || !readdirSync(join(assembly.directory, asset)).includes(ENTRY_FILE))
    throw new Error(`no bundle of ${choices.entry} in ${assembly.directory}`);
  return join(assembly.directory, asset);
}

/**
 * The root template with each nested stack's resources in place of its AWS::CloudFormation::Stack resource: a
 * parameter becomes the value the root passes, an output read by the root (`Fn::GetAtt [stack, Outputs.X]`) the
 * value it carries, and a dependency on a nested stack one on each of its resources (and theirs on what it waits for).
 */
export function flatten(stacks: readonly SynthesizedStack[]): CfnTemplate {
  const [root, ...nested] = stacks;
  const flat = structuredClone(root!.template);
  const resourcesOf = new Map<string, string[]>();
  const outputs = new Map<string, unknown>();
  for (const { logicalId, template, path } of nested) {
    const stackResource = flat.Resources[logicalId!]!;
    const passed = (stackResource.Properties?.Parameters ?? {}) as Record<string, unknown>;
    const inner = replace(structuredClone(template), (value) => {
      const ref = refName(value);
      return ref !== undefined && ref in passed ? passed[ref] : undefined;
    }) as CfnTemplate;
    const waitsFor = [stackResource.DependsOn ?? []].flat();
    for (const [id, resource] of Object.entries(inner.Resources)) {
      if (id in flat.Resources || resourcesOf.has(id)) throw new Error(`${path}: ${id} is in two stacks`);
      flat.Resources[id] = {
        ...resource,
        ...(waitsFor.length > 0 ? { DependsOn: [...[resource.DependsOn ?? []].flat(), ...waitsFor] } : {}),
      };
    }
    resourcesOf.set(logicalId!, Object.keys(inner.Resources));
    for (const [name, output] of Object.entries(inner.Outputs ?? {})) {
      outputs.set(`${logicalId}.Outputs.${name}`, output.Value);
    }
    delete flat.Resources[logicalId!];
  }
  const expanded = replace(flat, (value) => {
    const getAtt = (value as { 'Fn::GetAtt'?: unknown })?.['Fn::GetAtt'];
    if (!Array.isArray(getAtt) || Object.keys(value as object).length !== 1) return undefined;
    return outputs.get(getAtt.join('.'));
  }) as CfnTemplate;
  for (const resource of Object.values(expanded.Resources)) {
    if (resource.DependsOn === undefined) continue;
    resource.DependsOn = [
      ...new Set([resource.DependsOn].flat().flatMap((id) => resourcesOf.get(id) ?? [id])),
    ];
  }
  return expanded;
}

const refName = (value: unknown): string | undefined => {
  const ref = (value as { Ref?: unknown } | null)?.Ref;
  return typeof ref === 'string' && Object.keys(value as object).length === 1 ? ref : undefined;
};

/** `value` with every node for which `substitute` returns something replaced by it (recursively). */
function replace(value: unknown, substitute: (node: unknown) => unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const replaced = substitute(value);
  if (replaced !== undefined) return replaced;
  if (Array.isArray(value)) return value.map((item) => replace(item, substitute));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, replace(item, substitute)]));
}
