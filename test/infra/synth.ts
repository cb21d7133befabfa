// Synthesizes the stack the way `cdk synth` does (cdk.json's context, feature flags included), for the infra tests
// and the bundle benchmark. Without bundling it takes about a second; with bundling, esbuild runs per function.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
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

export interface Synthesized {
  app: App;
  stack: ControlPlaneStack;
  deployment: Deployment;
  template: Template;
  /** The synthesized template as text (for "this string must not appear" checks). */
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
  const template = Template.fromStack(stack);
  const assembly = app.synth();
  return {
    app,
    stack,
    deployment,
    template,
    templateText: JSON.stringify(template.toJSON()),
    outdir: assembly.directory,
  };
}
