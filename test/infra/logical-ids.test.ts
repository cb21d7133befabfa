// The logical IDs of the stack's stateful resources are the ones a deployed stack has. CloudFormation knows a
// resource by its logical ID: rename one (a new construct id, or a resource moved under another construct, which
// changes its construct path and so its ID) and the next deploy creates a new resource and deletes the old one. For
// these that means an empty database, new secrets (every user signed out, the log shipper and the environment
// service locked out), lost logs and queued failures, a new API URL for every agent and dashboard. So they are
// listed here, literally, as deployed; the rest of the template is free to change.
//
// A resource that is removed on purpose leaves this list with it. A new stateful resource joins it once deployed
// (the last test fails until it does).
//
// The stateful resources stay in the root stack; each feature's nested stack holds only functions, their log groups
// and routes (infra/constructs/feature-stack.ts), so a feature's stack can be added, split or renamed freely.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { type CfnElement, Stack } from 'aws-cdk-lib';
import { featureStackId } from '../../infra/constructs/feature-stack.ts';
import { PROJECT_ROOT, type Synthesized, synth } from './synth.ts';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

/** Of the stack built from config/prod.toml (local auth, builtin environment provider). */
const DEPLOYED: ReadonlyArray<readonly [type: string, logicalId: string, what: string]> = [
  ['AWS::EC2::VPC', 'Vpc8378EB38', 'the VPC (the cluster lives in it)'],
  ['AWS::EC2::Subnet', 'VpcdatabaseSubnet1SubnetD53A427B', "the cluster's subnets"],
  ['AWS::EC2::Subnet', 'VpcdatabaseSubnet2Subnet75663D63', "the cluster's subnets"],
  ['AWS::EC2::SecurityGroup', 'DatabaseSecurityGroup5C91FDCB', "the cluster's security group"],
  ['AWS::RDS::DBSubnetGroup', 'DatabaseSubnets56F17B9A', "the cluster's subnet group"],
  ['AWS::RDS::DBClusterParameterGroup', 'DatabaseParameters4609B2CF', "the cluster's parameters"],
  ['AWS::RDS::DBCluster', 'DatabaseB269D8BB', 'the Aurora cluster: all of the data'],
  ['AWS::RDS::DBInstance', 'Databasewriter2462CC03', "the cluster's writer"],
  [
    'AWS::SecretsManager::Secret',
    'AgentControlPlaneDatabaseSecret759F90733fdaad7efa858a3daf9490cf0a702aeb',
    "the cluster's master credentials",
  ],
  [
    'AWS::SecretsManager::SecretTargetAttachment',
    'DatabaseSecretAttachmentE5D1B020',
    'the credentials, attached',
  ],
  // Not deployed yet when pinned: the service role's credentials (migrations/0034_service_role.sql).
  [
    'AWS::SecretsManager::Secret',
    'ServiceDatabaseSecretC89DE88E',
    "the service role's credentials (a new one: the functions fail until Migrate runs)",
  ],
  [
    'AWS::SecretsManager::SecretTargetAttachment',
    'ServiceDatabaseSecretAttachment19C1DE38',
    "the service role's credentials, attached",
  ],
  ['AWS::SecretsManager::Secret', 'JwtSecretB8834B39', 'auth.jwt_secret: a new one signs everyone out'],
  ['AWS::SecretsManager::Secret', 'AuditIngestToken72812621', "the log shipper's token"],
  ['AWS::SecretsManager::Secret', 'InitialAdminPasswordF2EA60EA', "the first admin's password"],
  ['AWS::Logs::LogGroup', 'VpcFlowLogsE6FFDEF9', "the VPC's rejected-traffic flow log"],
  ['AWS::Logs::LogGroup', 'MigrateLogs5B280EF4', "Migrate's log"],
  ['AWS::Logs::LogGroup', 'ApiAccessLogsE9DF007D', "the API's access log"],
  [
    'AWS::Logs::LogGroup',
    'ConsoleSiteFilesLogsAC518CEB',
    "the log of the console's copy to S3 (under the ConsoleSite part: new, never flat)",
  ],
  [
    'AWS::ApiGatewayV2::Api',
    'ApiF70053CD',
    'the HTTP API: its id is in the URL agents and the dashboard call',
  ],
  ['AWS::KMS::Key', 'MonitoringAlarmTopicKeyFFA45DC9', "the alarm topic's key"],
  ['AWS::S3::Bucket', 'EventArchiveBucket3113F7E5', 'the event archive: every event past events.retention'],
  ['AWS::S3::Bucket', 'ConsoleSiteBucket380F1C30', "the console's files (CloudFront's origin, with its OAC)"],
  [
    'AWS::SNS::Topic',
    'MonitoringAlarmTopicAF62D4F1',
    'the alarm topic: a new one needs its subscriptions again',
  ],
  ['AWS::Logs::LogGroup', 'AlertEventLogEB5F3DE9', 'the alert events EventBridge delivered'],
  // Not deployed yet when pinned: the audit chain's anchors (Object Lock) and the key that signs them.
  [
    'AWS::S3::Bucket',
    'AuditAnchorBucket67D1229B',
    'the audit anchors: a new bucket loses the locked history an auditor checks the chain against',
  ],
  ['AWS::KMS::Key', 'AuditAnchorKeyF7E3633E', "the anchors' signing key: a new one is a new public key"],
];
/**
 * Every stateful resource of the root template (a type of ROOT_STATEFUL_TYPES, or a Retain deletion policy) as
 * synthesized from config/prod.toml on main at 3b8897d, before the functions moved to the feature stacks: that
 * template's list, less the functions' own log groups, which moved with their functions (`<Function>Logs`, checked
 * in their feature's stack below).
 */
const ROOT_ON_MAIN: ReadonlyArray<readonly [type: string, logicalId: string]> = [
  ['AWS::EC2::VPC', 'Vpc8378EB38'],
  ['AWS::EC2::Subnet', 'VpcdatabaseSubnet1SubnetD53A427B'],
  ['AWS::EC2::Subnet', 'VpcdatabaseSubnet2Subnet75663D63'],
  ['AWS::RDS::DBClusterParameterGroup', 'DatabaseParameters4609B2CF'],
  ['AWS::RDS::DBSubnetGroup', 'DatabaseSubnets56F17B9A'],
  ['AWS::EC2::SecurityGroup', 'DatabaseSecurityGroup5C91FDCB'],
  ['AWS::SecretsManager::Secret', 'AgentControlPlaneDatabaseSecret759F90733fdaad7efa858a3daf9490cf0a702aeb'],
  ['AWS::SecretsManager::SecretTargetAttachment', 'DatabaseSecretAttachmentE5D1B020'],
  ['AWS::RDS::DBCluster', 'DatabaseB269D8BB'],
  ['AWS::RDS::DBInstance', 'Databasewriter2462CC03'],
  ['AWS::SecretsManager::Secret', 'ServiceDatabaseSecretC89DE88E'],
  ['AWS::SecretsManager::SecretTargetAttachment', 'ServiceDatabaseSecretAttachment19C1DE38'],
  ['AWS::SecretsManager::Secret', 'JwtSecretB8834B39'],
  ['AWS::SecretsManager::Secret', 'AuditIngestToken72812621'],
  ['AWS::SecretsManager::Secret', 'InitialAdminPasswordF2EA60EA'],
  ['AWS::S3::Bucket', 'ConsoleSiteBucket380F1C30'],
  ['AWS::ApiGatewayV2::Api', 'ApiF70053CD'],
  ['AWS::SQS::Queue', 'HealthProbeDeadLetters39DC2A9D'],
  ['AWS::SQS::Queue', 'ObservabilityArchiveDeadLetters1A0C03A1'],
  ['AWS::SQS::Queue', 'ObservabilityFoldDeadLettersDEF85428'],
  ['AWS::SQS::Queue', 'ObservabilityPartitionsDeadLettersE4855718'],
  ['AWS::SQS::Queue', 'RequestsExpireDeadLetters56E11E31'],
  ['AWS::S3::Bucket', 'EventArchiveBucket3113F7E5'],
  ['AWS::Glue::Database', 'EventArchiveDatabase'],
  ['AWS::Glue::Table', 'EventArchiveTable'],
  ['AWS::KMS::Key', 'MonitoringAlarmTopicKeyFFA45DC9'],
  ['AWS::SNS::Topic', 'MonitoringAlarmTopicAF62D4F1'],
  ['AWS::Logs::LogGroup', 'VpcFlowLogsE6FFDEF9'],
  ['AWS::Logs::LogGroup', 'MigrateLogs5B280EF4'],
  ['AWS::Logs::LogGroup', 'ConsoleSiteFilesLogsAC518CEB'],
  ['AWS::Logs::LogGroup', 'ApiAccessLogsE9DF007D'],
  // Added since, by the alerts: their dead letters and the log EventBridge delivers alert events to.
  ['AWS::SQS::Queue', 'AlertsDeriveDeadLetters0256B0A2'],
  ['AWS::Logs::LogGroup', 'AlertEventLogEB5F3DE9'],
  // Added since, by the audit anchors: their bucket, signing key and the anchor function's dead letters.
  ['AWS::S3::Bucket', 'AuditAnchorBucket67D1229B'],
  ['AWS::KMS::Key', 'AuditAnchorKeyF7E3633E'],
  ['AWS::SQS::Queue', 'AuditAnchorDeadLettersB7D746FB'],
  ['AWS::SQS::Queue', 'ExportsDeliverDeadLetters2AF7695A'],
];
/** The types ROOT_ON_MAIN was recorded by (with any resource whose deletion policy is Retain). */
const ROOT_STATEFUL_TYPES = new Set([
  ...ROOT_ON_MAIN.map(([type]) => type),
  'AWS::DynamoDB::Table',
  'AWS::EFS::FileSystem',
]);

/** Of the stack built with envsvc.provider = "http" only. */
const DEPLOYED_WITH_HTTP_ENVIRONMENTS = [
  ['AWS::SecretsManager::Secret', 'EnvServiceToken8C210196', "the environment service's token"],
] as const;

/**
 * The logical ID CDK gives the resource `Resource` of a construct `id` made directly in the stack (no construct in
 * between): the id and the first 8 hex digits of the MD5 of the path below the stack. Each function's log group and
 * each scheduled function's dead-letter queue is named after its handler (plan.ts, constructIdFor), so their IDs
 * are checked by this rule, which holds for the ones deployed today and for those the route table adds later.
 */
const topLevelId = (id: string) =>
  `${id}${createHash('md5').update(`${id}/Resource`).digest('hex').slice(0, 8).toUpperCase()}`;

const STATEFUL_TYPES = new Set([
  ...DEPLOYED.map(([type]) => type),
  ...DEPLOYED_WITH_HTTP_ENVIRONMENTS.map(([type]) => type),
  'AWS::SQS::Queue',
]);

const scratch = mkdtempSync(join(tmpdir(), 'acp-logical-ids-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const prod = synth();
const httpConfig = join(scratch, 'envsvc-http.toml');
writeFileSync(
  httpConfig,
  `${readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8')}\n[envsvc]\nprovider = "http"\nurl = "https://envsvc.example.com"\n`,
);
const http = synth({ configFile: httpConfig });
/** Of the whole deployment: the root stack and its feature stacks (test/infra/synth.ts). */
const resourcesOf = (synthesized: Synthesized) =>
  synthesized.template.toJSON().Resources as Record<string, Resource>;
const rootResourcesOf = (synthesized: Synthesized) =>
  synthesized.root.toJSON().Resources as Record<string, Resource & { DeletionPolicy?: string }>;

test("the root stack's stateful resources are those of main's template, with the same logical IDs", () => {
  const stateful = Object.entries(rootResourcesOf(prod))
    .filter(([, resource]) => ROOT_STATEFUL_TYPES.has(resource.Type) || resource.DeletionPolicy === 'Retain')
    .map(([logicalId, resource]) => `${resource.Type} ${logicalId}`)
    .sort();
  assert.deepEqual(stateful, ROOT_ON_MAIN.map(([type, logicalId]) => `${type} ${logicalId}`).sort());
});

test('the stateful resources keep the logical IDs of the deployed stack, in the root stack', () => {
  const resources = rootResourcesOf(prod);
  for (const [type, logicalId, what] of DEPLOYED) {
    assert.equal(resources[logicalId]?.Type, type, `${logicalId} (${what}) is gone or renamed`);
  }
  const httpResources = rootResourcesOf(http);
  for (const [type, logicalId, what] of DEPLOYED_WITH_HTTP_ENVIRONMENTS) {
    assert.equal(httpResources[logicalId]?.Type, type, `${logicalId} (${what}) is gone or renamed`);
  }
});

test("each function's log group is named after its handler, directly in its feature's stack; each dead-letter queue in the root", () => {
  const root = rootResourcesOf(prod);
  for (const planned of prod.stack.plan) {
    const fn = prod.stack.functions.get(planned.handler)!;
    const stack = prod.stacks.find((synthesized) => synthesized.path === Stack.of(fn).node.path)!;
    assert.equal(stack.path, `${prod.stack.node.path}/${featureStackId(planned.handler.split('/')[0]!)}`);
    const resource = stack.template.Resources[Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnElement)]!;
    const logGroup = (resource.Properties!.LoggingConfig as { LogGroup: { Ref: string } }).LogGroup.Ref;
    assert.equal(logGroup, topLevelId(`${planned.constructId}Logs`), planned.handler);
    assert.equal(stack.template.Resources[logGroup]?.Type, 'AWS::Logs::LogGroup', planned.handler);
    if (planned.schedules.length > 0) {
      const queue = topLevelId(`${planned.constructId}DeadLetters`);
      assert.equal(root[queue]?.Type, 'AWS::SQS::Queue', `${planned.handler}: ${queue}`);
    }
  }
  // The rule is the one CDK applies (checked on IDs listed above).
  assert.equal(topLevelId('VpcFlowLogs'), 'VpcFlowLogsE6FFDEF9');
  assert.equal(topLevelId('MigrateLogs'), 'MigrateLogs5B280EF4');
});

test('every stateful resource of the template is pinned above', () => {
  const pinned = new Set<string>([
    ...DEPLOYED.map(([, logicalId]) => logicalId),
    ...DEPLOYED_WITH_HTTP_ENVIRONMENTS.map(([, logicalId]) => logicalId),
    ...prod.stack.plan.map((planned) => topLevelId(`${planned.constructId}Logs`)),
    ...prod.stack.plan
      .filter((planned) => planned.schedules.length > 0)
      .map((planned) => topLevelId(`${planned.constructId}DeadLetters`)),
  ]);
  for (const synthesized of [prod, http]) {
    const unpinned = Object.entries(resourcesOf(synthesized))
      .filter(([logicalId, resource]) => STATEFUL_TYPES.has(resource.Type) && !pinned.has(logicalId))
      .map(([logicalId, resource]) => `${resource.Type} ${logicalId}`);
    assert.deepEqual(
      unpinned,
      [],
      'a new stateful resource: add its logical ID to DEPLOYED once it is deployed',
    );
  }
});
