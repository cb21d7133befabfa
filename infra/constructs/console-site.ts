// The admin console in AWS: its files (console/build.ts, built by esbuild at synth) in a private S3 bucket, served by
// CloudFront through origin access control, under /console/ as the local server serves them, with the console's
// Content-Security-Policy. The API stays API Gateway's own origin; the console learns its URL from the settings file
// deployed beside its assets (docs/hosting.md says why not one origin).
import { join } from 'node:path';
import { Aws, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudfront from 'aws-cdk-lib/aws-cloudfront';
import * as origins from 'aws-cdk-lib/aws-cloudfront-origins';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as s3deploy from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import {
  ASSET_CACHE_CONTROL,
  buildConsoleSync,
  CONSOLE_ASSETS,
  CONSOLE_CONFIG_FILE,
  CONSOLE_PATH,
  type ConsoleBuild,
  consoleCsp,
  PAGE_CACHE_CONTROL,
  writeConsoleFiles,
} from '#console/build.ts';
import { consoleConnectSources, consoleSettings } from '#console/settings.ts';
import type { Config } from '#shared/core/config/schema.ts';
import { contentHash } from '../settings.ts';

/**
 * The hosts the console may call: API Gateway's in the stack's region. Not the API's exact host: the API's CORS
 * allows the console's CloudFront origin, so the distribution (its headers policy) cannot also name the API without a
 * dependency cycle.
 */
export const CONSOLE_API_SOURCES = [`https://*.execute-api.${Aws.REGION}.${Aws.URL_SUFFIX}`];

/**
 * Page paths are the console's routes (it routes in the browser): CloudFront answers them with index.html, as the
 * local server does. Done at the viewer request, not with error responses, so that a missing asset stays an error
 * (S3's 403: the distribution may not list the bucket) rather than a page.
 */
export const PAGE_ROUTING = `function handler(event) {
  var request = event.request;
  var uri = request.uri;
  if (uri === '/' || uri === '${CONSOLE_PATH}') {
    return { statusCode: 302, statusDescription: 'Found', headers: { location: { value: '${CONSOLE_PATH}/' } } };
  }
  if (uri.startsWith('${CONSOLE_PATH}/') && !uri.startsWith('${CONSOLE_PATH}/${CONSOLE_ASSETS}/')) {
    request.uri = '${CONSOLE_PATH}/index.html';
  }
  return request;
}`;

/** Where the deployment writes the console's settings (consoleSettings with the API's URL), beside its assets. */
export const CONSOLE_SETTINGS_KEY = `${CONSOLE_PATH.slice(1)}/${CONSOLE_ASSETS}/${CONSOLE_CONFIG_FILE}`;

/** The content-hashed scripts and styles: every key below it but the settings file. */
const ASSET_KEYS = `${CONSOLE_PATH.slice(1)}/${CONSOLE_ASSETS}/*`;

/**
 * The Cache-Control S3 stores with the object at `key` (and CloudFront passes on): the deployments below set it from
 * the same rule.
 */
export function consoleCacheControl(key: string): string {
  const isAsset = key.startsWith(ASSET_KEYS.slice(0, -1)) && key !== CONSOLE_SETTINGS_KEY;
  return isAsset ? ASSET_CACHE_CONTROL : PAGE_CACHE_CONTROL;
}

const FRAME_OPTION = cloudfront.HeadersFrameOption.DENY;
const REFERRER_POLICY = cloudfront.HeadersReferrerPolicy.NO_REFERRER;
const HSTS_MAX_AGE = Duration.days(365);

/** The console's policy, with connect-src naming the API at `apiSources` (and the IdP it signs in through). */
const siteCsp = (apiSources: readonly string[], config: Config) =>
  consoleCsp([...apiSources, ...consoleConnectSources(config)]);

/**
 * The headers the distribution's response headers policy adds to every answer, as a browser receives them, the API
 * being at `apiSources`: the policy below is made from them, and test/support/console-site.ts serves them.
 */
export function consoleSiteHeaders(apiSources: readonly string[], config: Config): Record<string, string> {
  return {
    'content-security-policy': siteCsp(apiSources, config),
    'x-content-type-options': 'nosniff',
    'x-frame-options': FRAME_OPTION,
    'referrer-policy': REFERRER_POLICY,
    'strict-transport-security': `max-age=${HSTS_MAX_AGE.toSeconds()}; includeSubDomains`,
  };
}

let built: ConsoleBuild | undefined;

/**
 * The console built once per process (a synth), staged in a directory named after its content (CDK copies it as an
 * asset); returns that directory.
 */
export function stageConsole(stagingDir: string): string {
  built ??= buildConsoleSync();
  const parts = [
    built.html,
    ...[...built.assets].map(([name, asset]) => `${name}:${contentHash(String(asset.body))}`),
  ];
  const dir = join(stagingDir, 'console-site', contentHash(parts.join('\n')));
  writeConsoleFiles(built, dir);
  return dir;
}

export interface ConsoleSiteProps {
  /** Where the console's files are staged before CDK copies them as an asset (stagingDirOf). */
  stagingDir: string;
  /** Of the copy function's log group. */
  logRetention: logs.RetentionDays;
  /** The service config: the identity provider the console signs in through (console/settings.ts), if any. */
  config: Config;
}

export class ConsoleSite extends Construct {
  readonly bucket: s3.Bucket;
  readonly distribution: cloudfront.Distribution;
  /** https://<distribution>: the origin the API's CORS allows. */
  readonly origin: string;
  /** The console's first page: https://<distribution>/console/. */
  readonly url: string;
  /** What dashboard_url is when it is this console (the agent's sign-in page is `<dashboardUrl>/cli/login`). */
  readonly dashboardUrl: string;
  private readonly stagingDir: string;
  private readonly logRetention: logs.RetentionDays;
  private readonly config: Config;

  constructor(scope: Construct, id: string, props: ConsoleSiteProps) {
    super(scope, id);
    this.stagingDir = props.stagingDir;
    this.logRetention = props.logRetention;
    this.config = props.config;
    // Only built files, all of them rebuilt from the repository on every deploy: nothing to keep.
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const headers = new cloudfront.ResponseHeadersPolicy(this, 'Headers', {
      comment: 'The admin console: its Content-Security-Policy (console/build.ts) and security headers',
      securityHeadersBehavior: {
        contentSecurityPolicy: {
          contentSecurityPolicy: siteCsp(CONSOLE_API_SOURCES, props.config),
          override: true,
        },
        contentTypeOptions: { override: true },
        frameOptions: { frameOption: FRAME_OPTION, override: true },
        referrerPolicy: { referrerPolicy: REFERRER_POLICY, override: true },
        strictTransportSecurity: {
          accessControlMaxAge: HSTS_MAX_AGE,
          includeSubdomains: true,
          override: true,
        },
      },
    });
    const routing = new cloudfront.Function(this, 'PageRouting', {
      comment: 'Console page paths answer with index.html; / goes to /console/',
      code: cloudfront.FunctionCode.fromInline(PAGE_ROUTING),
      runtime: cloudfront.FunctionRuntime.JS_2_0,
    });
    this.distribution = new cloudfront.Distribution(this, 'Distribution', {
      comment: 'Agent control plane admin console',
      defaultBehavior: {
        origin: origins.S3BucketOrigin.withOriginAccessControl(this.bucket),
        viewerProtocolPolicy: cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        allowedMethods: cloudfront.AllowedMethods.ALLOW_GET_HEAD,
        // CachingOptimized accepts gzip and brotli: CloudFront compresses the script and the stylesheet.
        cachePolicy: cloudfront.CachePolicy.CACHING_OPTIMIZED,
        compress: true,
        responseHeadersPolicy: headers,
        functionAssociations: [{ function: routing, eventType: cloudfront.FunctionEventType.VIEWER_REQUEST }],
      },
      defaultRootObject: 'index.html',
      httpVersion: cloudfront.HttpVersion.HTTP2_AND_3,
      priceClass: cloudfront.PriceClass.PRICE_CLASS_100,
    });
    this.origin = `https://${this.distribution.distributionDomainName}`;
    this.url = `${this.origin}${CONSOLE_PATH}/`;
    this.dashboardUrl = `${this.origin}${CONSOLE_PATH}`;
    this.acknowledgeFindings();
  }

  /**
   * Copies the console and its settings (`api_url`, and the IdP it signs in through) to the bucket. Called once the
   * API exists; the settings are what the console reads to find it.
   */
  deploy(apiUrl: string): s3deploy.BucketDeployment {
    const logGroup = new logs.LogGroup(this, 'FilesLogs', {
      retention: this.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Its own role rather than CDK's default: no AWS managed policy, logs to its own log group only.
    const role = new iam.Role(this, 'FilesRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: 'Copies the admin console build to its bucket on deploy',
    });
    logGroup.grantWrite(role);
    const staged = stageConsole(this.stagingDir);
    // The hashed assets first, kept on later deploys (no prune): a page loaded before a deploy still finds its script.
    const assets = new s3deploy.BucketDeployment(this, 'Assets', {
      sources: [s3deploy.Source.asset(staged)],
      destinationBucket: this.bucket,
      exclude: ['*'],
      include: [ASSET_KEYS],
      prune: false,
      cacheControl: [s3deploy.CacheControl.fromString(ASSET_CACHE_CONTROL)],
      retainOnDelete: false,
      logGroup,
      role,
    });
    // Then the page and the settings, never cached, so that a deploy shows at the next load without an invalidation
    // (whose grant CDK writes on every distribution, `*`). Pruning spares the assets: the filters apply to it too.
    const deployment = new s3deploy.BucketDeployment(this, 'Files', {
      sources: [
        s3deploy.Source.asset(staged),
        s3deploy.Source.jsonData(CONSOLE_SETTINGS_KEY, consoleSettings(this.config, apiUrl)),
      ],
      destinationBucket: this.bucket,
      exclude: [ASSET_KEYS],
      include: [CONSOLE_SETTINGS_KEY],
      cacheControl: [s3deploy.CacheControl.fromString(PAGE_CACHE_CONTROL)],
      retainOnDelete: false,
      logGroup,
      role,
    });
    deployment.node.addDependency(assets);
    // cdk-nag 3 wants each wildcard of CDK's grants acknowledged by itself.
    const grants =
      "CDK's BucketDeployment grants, scoped to two buckets: read the console's build from the CDK asset bucket, " +
      'and replace the objects of the console bucket (no other bucket).';
    Validations.of(role).acknowledge(
      ...[
        'Action::s3:GetBucket*',
        'Action::s3:GetObject*',
        'Action::s3:List*',
        'Action::s3:Abort*',
        'Action::s3:DeleteObject*',
        `Resource::arn:<AWS::Partition>:s3:::${this.assetBucketName()}/*`,
        `Resource::<${Stack.of(this).getLogicalId(this.bucket.node.defaultChild as s3.CfnBucket)}.Arn>/*`,
      ].map((finding) => ({ id: `AwsSolutions-IAM5[${finding}]`, reason: grants })),
    );
    // CDK's one handler for every BucketDeployment of the stack, beside the stack's resources.
    const handler = Stack.of(this).node.children.find((child) =>
      child.node.id.startsWith('Custom::CDKBucketDeployment'),
    );
    if (handler) {
      Validations.of(handler).acknowledge({
        id: 'AwsSolutions-L1',
        reason:
          "The runtime of CDK's BucketDeployment handler (a Python function that copies the files) is chosen by " +
          'aws-cdk-lib and moves with it; it runs only during deployments.',
      });
    }
    return deployment;
  }

  /** The CDK asset bucket's name as cdk-nag writes it (the default synthesizer's, with its qualifier). */
  private assetBucketName(): string {
    const qualifier = this.node.tryGetContext('@aws-cdk/core:bootstrapQualifier') ?? 'hnb659fds';
    return `cdk-${qualifier}-assets-<AWS::AccountId>-<AWS::Region>`;
  }

  private acknowledgeFindings(): void {
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'The bucket holds only the console build, written by the deployment and read by CloudFront through origin ' +
        'access control; nothing else can reach it, so access logs would only repeat CloudFront requests.',
    });
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason: 'Admins sign in from wherever they work; every API call is authenticated by the service.',
      },
      {
        id: 'AwsSolutions-CFR2',
        reason:
          'The distribution serves static files only; the API is not behind it (its throttling and sign-in ' +
          'lockouts stay at API Gateway and in the service). A WAF web ACL can be attached for a custom domain.',
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          'Static files only, the same for everyone and public by nature (the console code); who called the API is ' +
          'in the API access log and the audit log.',
      },
      {
        id: 'AwsSolutions-CFR4',
        reason:
          "No custom domain: the distribution uses CloudFront's default certificate (*.cloudfront.net), which CloudFront " +
          'does not let a distribution restrict to TLS 1.2. Give it a domain and certificate to set the minimum.',
      },
    );
  }
}
