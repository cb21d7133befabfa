// The admin console in the stack (infra/constructs/console-site.ts): a private bucket behind CloudFront with origin
// access control, the console's Content-Security-Policy as a response headers policy, its pages routed to
// index.html, the build copied at deploy with the API's URL beside it, and the console as dashboard_url when the
// config has none.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { buildConsole, CONSOLE_CSP, consoleCsp } from '#console/build.ts';
import { CONSOLE_API_SOURCES, consoleSiteHeaders } from '../../infra/constructs/console-site.ts';
import { ENV } from '../../infra/constructs/service-function.ts';
import { PROJECT_ROOT, synth } from './synth.ts';

type Json = Record<string, unknown>;
interface Resource {
  Type: string;
  Properties: Json;
}

const prod = synth();
const resources = prod.template.toJSON().Resources as Record<string, Resource>;
const ofType = (type: string) => Object.values(resources).filter((r) => r.Type === type);
const site = prod.stack.consoleSite!;
const resolve = (value: unknown) => prod.stack.resolve(value);

test('the bucket is private: encrypted, every public access blocked, TLS only', () => {
  prod.template.hasResourceProperties('AWS::S3::Bucket', {
    BucketEncryption: {
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    },
    PublicAccessBlockConfiguration: {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    },
  });
  assert.ok(!prod.templateText.includes('WebsiteConfiguration'), 'not a public website bucket');
  const [policy] = ofType('AWS::S3::BucketPolicy') as [Resource];
  const statements = (policy.Properties.PolicyDocument as { Statement: Json[] }).Statement;
  assert.ok(
    statements.some(
      (s) => s.Effect === 'Deny' && JSON.stringify(s.Condition).includes('"aws:SecureTransport":"false"'),
    ),
    'enforceSSL',
  );
  // Only CloudFront, for this distribution, may read: no Principal "*" without that condition.
  const allows = statements.filter((s) => s.Effect === 'Allow');
  assert.ok(allows.length > 0);
  for (const allow of allows) {
    assert.deepEqual(allow.Principal, { Service: 'cloudfront.amazonaws.com' });
    assert.match(JSON.stringify(allow.Condition), /AWS:SourceArn/);
  }
});

test('CloudFront reaches the bucket through origin access control, over HTTPS only', () => {
  prod.template.resourceCountIs('AWS::CloudFront::OriginAccessControl', 1);
  prod.template.hasResourceProperties('AWS::CloudFront::OriginAccessControl', {
    OriginAccessControlConfig: Match.objectLike({
      OriginAccessControlOriginType: 's3',
      SigningBehavior: 'always',
    }),
  });
  const [distribution] = ofType('AWS::CloudFront::Distribution') as [Resource];
  const config = distribution.Properties.DistributionConfig as Json;
  const [origin] = config.Origins as [Json];
  assert.ok(origin.OriginAccessControlId, 'OAC on the S3 origin');
  assert.deepEqual((origin.S3OriginConfig as Json).OriginAccessIdentity, '', 'no legacy OAI');
  const behavior = config.DefaultCacheBehavior as Json;
  assert.equal(behavior.ViewerProtocolPolicy, 'redirect-to-https');
  assert.equal(config.DefaultRootObject, 'index.html');
});

test('the console is served with the same Content-Security-Policy as locally, plus the API of the stack', () => {
  const [policy] = ofType('AWS::CloudFront::ResponseHeadersPolicy') as [Resource];
  const security = (policy.Properties.ResponseHeadersPolicyConfig as Json).SecurityHeadersConfig as Json;
  const csp = (security.ContentSecurityPolicy as Json).ContentSecurityPolicy;
  assert.deepEqual(csp, resolve(consoleCsp(CONSOLE_API_SOURCES)));
  // One definition: the deployed policy is the local one with the API's hosts added to connect-src.
  const text = JSON.stringify(csp);
  for (const directive of CONSOLE_CSP.split('; ').filter((d) => !d.startsWith('connect-src'))) {
    assert.ok(text.includes(directive), directive);
  }
  assert.match(text, /connect-src 'self' https:\/\/\*\.execute-api\./);
  assert.doesNotMatch(text, /unsafe-inline|unsafe-eval/);
  assert.equal((security.ContentSecurityPolicy as Json).Override, true);
  assert.equal((security.FrameOptions as Json).FrameOption, 'DENY');
  assert.equal((security.ReferrerPolicy as Json).ReferrerPolicy, 'no-referrer');
  assert.ok(security.ContentTypeOptions);
  const [distribution] = ofType('AWS::CloudFront::Distribution') as [Resource];
  const behavior = (distribution.Properties.DistributionConfig as Json).DefaultCacheBehavior as Json;
  assert.ok(behavior.ResponseHeadersPolicyId, 'the policy is on the console behavior');
});

/** The headers CloudFront adds for a policy's SecurityHeadersConfig, as its documentation names them. */
function headersSent(security: Record<string, Json | undefined>): Json {
  const {
    ContentSecurityPolicy,
    ContentTypeOptions,
    FrameOptions,
    ReferrerPolicy,
    StrictTransportSecurity,
    ...rest
  } = security;
  assert.deepEqual(Object.keys(rest), [], 'a security header this reading does not know');
  const hsts = StrictTransportSecurity;
  return {
    ...(ContentSecurityPolicy
      ? { 'content-security-policy': ContentSecurityPolicy.ContentSecurityPolicy }
      : {}),
    ...(ContentTypeOptions ? { 'x-content-type-options': 'nosniff' } : {}),
    ...(FrameOptions ? { 'x-frame-options': FrameOptions.FrameOption } : {}),
    ...(ReferrerPolicy ? { 'referrer-policy': ReferrerPolicy.ReferrerPolicy } : {}),
    ...(hsts
      ? {
          'strict-transport-security': [
            `max-age=${hsts.AccessControlMaxAgeSec}`,
            ...(hsts.IncludeSubdomains ? ['includeSubDomains'] : []),
            ...(hsts.Preload ? ['preload'] : []),
          ].join('; '),
        }
      : {}),
  };
}

test('the policy sends exactly consoleSiteHeaders, which the cross-origin browser test serves the console with', () => {
  const [policy] = ofType('AWS::CloudFront::ResponseHeadersPolicy') as [Resource];
  const config = policy.Properties.ResponseHeadersPolicyConfig as Json;
  assert.equal(config.CustomHeadersConfig, undefined);
  assert.equal(config.RemoveHeadersConfig, undefined);
  assert.deepEqual(
    headersSent(config.SecurityHeadersConfig as Record<string, Json>),
    resolve(consoleSiteHeaders(CONSOLE_API_SOURCES, prod.deployment.config)),
  );
});

test('console pages answer with index.html at the viewer request; assets and / are left alone or redirected', () => {
  const [fn] = ofType('AWS::CloudFront::Function') as [Resource];
  const code = String(fn.Properties.FunctionCode);
  // Run the function as CloudFront would.
  const handler = new Function(`${code}; return handler;`)() as (event: { request: { uri: string } }) => {
    uri?: string;
    statusCode?: number;
    headers?: { location: { value: string } };
  };
  const uriOf = (uri: string) => handler({ request: { uri } });
  assert.equal(uriOf('/console/cli/login').uri, '/console/index.html');
  assert.equal(uriOf('/console/summary').uri, '/console/index.html');
  assert.equal(uriOf('/console/').uri, '/console/index.html');
  assert.equal(uriOf('/console/assets/console.js').uri, '/console/assets/console.js');
  assert.equal(uriOf('/console/assets/config.json').uri, '/console/assets/config.json');
  assert.equal(uriOf('/').statusCode, 302);
  assert.equal(uriOf('/').headers?.location.value, '/console/');
  assert.equal(uriOf('/console').headers?.location.value, '/console/');
  // No error responses: they would turn a missing asset into a page.
  const [distribution] = ofType('AWS::CloudFront::Distribution') as [Resource];
  assert.equal((distribution.Properties.DistributionConfig as Json).CustomErrorResponses, undefined);
});

test('the build is made at synth and copied with the API URL beside it: hashed assets first, then the page', () => {
  const deployments = ofType('Custom::CDKBucketDeployment');
  const byId = (id: string) =>
    Object.entries(resources).find(
      ([logical, r]) => r.Type === 'Custom::CDKBucketDeployment' && logical.includes(id),
    );
  const [assetsId, assets] = byId('ConsoleSiteAssets') ?? assert.fail('no assets deployment');
  const [, files] = byId('ConsoleSiteFiles') ?? assert.fail('no page deployment');
  assert.equal(deployments.length, 2);
  assert.equal((files.Properties.SourceObjectKeys as unknown[]).length, 2);
  const markers = JSON.stringify(files.Properties.SourceMarkers);
  // config.json's api_url: the $default stage's URL, https://<api id>.execute-api.<region>.<suffix>/.
  const apiId = prod.stack.getLogicalId(prod.stack.api.node.defaultChild as unknown as CfnElement);
  assert.ok(markers.includes(`{"Ref":"${apiId}"}`), 'config.json carries the API URL');
  // Caching as S3 stores it: the hashed assets for a year, kept across deploys; the page and settings never.
  assert.deepEqual(assets.Properties.SystemMetadata, {
    'cache-control': 'public, max-age=31536000, immutable',
  });
  assert.equal(assets.Properties.Prune, false);
  assert.deepEqual(assets.Properties.Exclude, ['*']);
  assert.deepEqual(assets.Properties.Include, ['console/assets/*']);
  assert.deepEqual(files.Properties.SystemMetadata, { 'cache-control': 'no-store' });
  assert.deepEqual(files.Properties.Exclude, ['console/assets/*']);
  assert.deepEqual(files.Properties.Include, ['console/assets/config.json']);
  assert.ok(
    JSON.stringify((files as Resource & { DependsOn?: string[] }).DependsOn ?? []).includes(assetsId),
    'the page is copied after the assets it names',
  );
  // The staged directory CDK copied into the cloud assembly holds the console as the bucket will.
  const staged = readdirSync(prod.outdir).filter((name) =>
    existsSync(join(prod.outdir, name, 'console', 'index.html')),
  );
  assert.equal(staged.length, 1);
  const dir = join(prod.outdir, staged[0]!, 'console');
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  const script = /"\/console\/assets\/(console-[A-Z0-9]+\.js)"/.exec(html)?.[1];
  const style = /"\/console\/assets\/(console-[A-Z0-9]+\.css)"/.exec(html)?.[1];
  assert.ok(script && style, 'index.html names the hashed script and stylesheet');
  assert.ok(readFileSync(join(dir, 'assets', script)).length > 10_000);
  assert.ok(existsSync(join(dir, 'assets', style)));
});

test('CloudFront compresses the console: the behavior compresses under a cache policy that accepts gzip and brotli', () => {
  const [distribution] = ofType('AWS::CloudFront::Distribution') as [Resource];
  const behavior = (distribution.Properties.DistributionConfig as Json).DefaultCacheBehavior as Json;
  assert.equal(behavior.Compress, true);
  // CachingOptimized, the managed policy whose settings enable gzip and brotli (AWS's managed cache policies).
  assert.equal(behavior.CachePolicyId, '658327ea-f89d-4fab-a63d-7e88639e58f6');
});

test('one build: the files the stack deploys are the ones the local server serves', async () => {
  const local = await buildConsole();
  const staged = readdirSync(prod.outdir).find((name) =>
    existsSync(join(prod.outdir, name, 'console', 'index.html')),
  );
  const dir = join(prod.outdir, staged!, 'console');
  assert.equal(readFileSync(join(dir, 'index.html'), 'utf8'), local.html);
  for (const [name, asset] of local.assets) {
    assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'assets', name))), asset.body, name);
  }
  assert.deepEqual(readdirSync(join(dir, 'assets')).sort(), [...local.assets.keys()].sort());
});

test('esbuild is loaded only when a build runs: not by npm start, not by anything deployed', () => {
  // Which modules importing the local server's console and the stack's part resolves, seen by a resolve hook.
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(specifier, context, next) { seen.push(specifier); return next(specifier, context); } });
    await import('#local-server/console.ts');
    await import('./infra/constructs/console-site.ts');
    console.log(JSON.stringify(seen.filter((s) => /esbuild/.test(s))));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  });
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout.trim().split('\n').pop()!), []);
});

test('outputs: ConsoleUrl, and the console as dashboard_url (given to the functions) when the config has none', () => {
  const outputs = prod.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  assert.deepEqual(outputs.ConsoleUrl!.Value, resolve(site.url));
  assert.deepEqual(outputs.DashboardUrl!.Value, resolve(site.dashboardUrl));
  assert.match(JSON.stringify(outputs.DashboardUrl!.Value), /DomainName.*\/console"/);
  // Every service function reads it (SVC_DASHBOARD_URL), since the bundled config has none.
  for (const planned of prod.stack.plan) {
    const fn = prod.stack.functions.get(planned.handler)!;
    const variables = resolve(
      (fn.node.defaultChild as unknown as { environment: { variables: Json } }).environment,
    ).variables as Json;
    assert.deepEqual(variables[ENV.dashboardUrl], resolve(site.dashboardUrl), planned.handler);
  }
});

test('a config with its own dashboard_url keeps it; -c console=false leaves the console out', () => {
  const local = synth({ configFile: 'config/local.toml' });
  const outputs = local.template.toJSON().Outputs as Record<string, { Value: unknown }>;
  assert.equal(outputs.DashboardUrl!.Value, local.deployment.config.dashboard_url);
  assert.ok(outputs.ConsoleUrl);
  assert.ok(!local.templateText.includes(`"${ENV.dashboardUrl}"`));

  const without = synth({ context: { console: 'false' } });
  without.template.resourceCountIs('AWS::CloudFront::Distribution', 0);
  // The stack's buckets then are the event archive's and the audit anchors' (config/prod.toml puts both in S3).
  assert.deepEqual(
    Object.entries(without.template.findResources('AWS::S3::Bucket')).map(([id]) =>
      id.replace(/[0-9A-F]{8}$/, ''),
    ),
    ['EventArchiveBucket', 'AuditAnchorBucket'],
  );
  const bare = without.template.toJSON().Outputs as Record<string, unknown>;
  assert.ok(!('ConsoleUrl' in bare) && !('DashboardUrl' in bare));
  assert.match(without.deployment.warnings.join('\n'), /CLI sign-in is disabled/);
});

test('auth.provider = "idp" with a console client: the CSP lets the console call the IdP, config.json names it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'acp-idp-config-'));
  const prodToml = readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8');
  const idpToml = (clientId: string) =>
    prodToml.replace(
      /^provider = "local"$/m,
      `provider = "idp"\nidp_domain = "tenant.example-idp.com"\nidp_audience = "https://api.example.com"\nidp_client_id = "${clientId}"`,
    );
  writeFileSync(join(dir, 'idp.toml'), idpToml('console-client'));
  const idp = synth({ configFile: join(dir, 'idp.toml') });
  assert.ok(idp.deployment.config.auth.provider === 'idp', 'the config was switched to the IdP');
  assert.deepEqual(idp.deployment.warnings, []);
  const [policy] = Object.values(idp.template.findResources('AWS::CloudFront::ResponseHeadersPolicy')) as [
    Resource,
  ];
  const security = (policy.Properties.ResponseHeadersPolicyConfig as Json).SecurityHeadersConfig as Json;
  const csp = (security.ContentSecurityPolicy as Json).ContentSecurityPolicy;
  assert.deepEqual(
    csp,
    idp.stack.resolve(consoleCsp([...CONSOLE_API_SOURCES, 'https://tenant.example-idp.com'])),
  );
  // The settings file the deployment writes beside the assets (CDK stages it with the API URL as a marker).
  const settingsFiles = readdirSync(idp.outdir, { recursive: true, encoding: 'utf8' }).filter((path) =>
    path.endsWith(join('console', 'assets', 'config.json')),
  );
  assert.equal(settingsFiles.length, 1);
  const settings = JSON.parse(readFileSync(join(idp.outdir, settingsFiles[0]!), 'utf8')) as Json;
  assert.deepEqual(settings.idp, {
    issuer: 'https://tenant.example-idp.com/',
    client_id: 'console-client',
    scope: 'openid profile email',
    audience: 'https://api.example.com',
  });
  assert.equal(typeof settings.api_url, 'string');

  // Without a client for the console, the stack says the console cannot sign in.
  writeFileSync(join(dir, 'no-client.toml'), idpToml(''));
  const noClient = synth({ configFile: join(dir, 'no-client.toml') });
  assert.match(noClient.deployment.warnings.join('\n'), /the console cannot sign in: .*auth\.idp_client_id/);
  const [plain] = Object.values(
    noClient.template.findResources('AWS::CloudFront::ResponseHeadersPolicy'),
  ) as [Resource];
  assert.doesNotMatch(JSON.stringify(plain.Properties), /example-idp/);
});
