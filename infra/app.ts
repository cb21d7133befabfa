// The CDK app (`npx cdk synth`, `npx cdk deploy`): one stack, with a nested stack per feature, built from the TOML
// config named by the context value `config` (default config/prod.toml) and the AWS settings of the context (see
// infra/settings.ts). Offline: no lookups, local esbuild bundling. cdk-nag's AwsSolutions pack runs on every synth
// (nested stacks included); a finding fails it.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { AWS_CONTEXT_KEYS, DEFAULT_DEPLOY_CONFIG, loadDeployment } from './settings.ts';
import { ControlPlaneStack } from './stack.ts';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const app = new App();
const context = (key: string): unknown => app.node.tryGetContext(key);
const flag = (key: string) => context(key) === true || context(key) === 'true';
const configFile = String(context('config') ?? DEFAULT_DEPLOY_CONFIG);
const deployment = loadDeployment(
  resolve(projectRoot, configFile),
  Object.fromEntries(Object.values(AWS_CONTEXT_KEYS).map((key) => [key, context(key)])),
);
const { account, region, stack_name: stackName } = deployment.aws;

new ControlPlaneStack(app, stackName, {
  deployment,
  projectRoot,
  ...(account || region ? { env: { account, region } } : {}),
  description: `Agent control plane (${deployment.config.env}, config ${configFile})`,
  samLocal: flag('samLocal'),
  sourceMapsAtRuntime: flag('sourceMapsAtRuntime'),
  tags: { service: 'agent-control-plane', env: deployment.config.env },
});

Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
app.synth();
