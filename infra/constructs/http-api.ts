// The HTTP API: the API itself, CORS answered by the gateway, JSON access logs, default throttling on the stage and
// lower per-route throttling of the sign-in routes. Its routes are added by each feature's stack (addApiRoutes): one
// route per mounted route-table row to its handler's function, and the $default route to the not-found fallback.
import { Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { CORS_ALLOW_HEADERS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from '#shared/core/http/cors.ts';
import type { PlannedFunction } from '../plan.ts';
import { FlatConstruct } from './flat-construct.ts';

/**
 * The sign-in routes (by route-table id), throttled per route below the API's default (signinRateLimit /
 * signinBurstLimit): the first layer against password guessing, before the service's own lockouts
 * (shared/identity/lockouts.ts).
 */
export const SIGNIN_ROUTES: readonly string[] = ['login', 'cliToken'];

export interface Throttle {
  /** Requests per second, steady. */
  rateLimit: number;
  burstLimit: number;
}

export interface ServiceHttpApiProps {
  /** cors.allowed_origins; none: no CORS configuration. */
  allowedOrigins: string[];
  /** The stage's default, for every route. */
  throttle: Throttle;
  /** The sign-in routes' own (SIGNIN_ROUTES). */
  signinThrottle: Throttle;
  /** Of the access log. */
  logRetention: logs.RetentionDays;
  logRemovalPolicy: RemovalPolicy;
}

export class ServiceHttpApi extends FlatConstruct {
  readonly api: apigwv2.HttpApi;
  /** The `$default` stage: its URL is the API's base URL. */
  readonly stage: apigwv2.HttpStage;
  private readonly signinThrottle: Throttle;

  constructor(scope: Construct, id: string, props: ServiceHttpApiProps) {
    super(scope, id);
    // Created in `scope`, with the ids the deployed stack has (see flat-construct.ts).
    const origins = props.allowedOrigins;
    this.signinThrottle = props.signinThrottle;
    this.api = new apigwv2.HttpApi(scope, 'Api', {
      description: 'Agent control plane (one Lambda per route-table handler)',
      createDefaultStage: false,
      ...(origins.length > 0
        ? {
            corsPreflight: {
              allowOrigins: origins,
              allowMethods: [apigwv2.CorsHttpMethod.ANY],
              allowHeaders: [...CORS_ALLOW_HEADERS],
              exposeHeaders: [...CORS_EXPOSE_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }
        : {}),
    });
    const accessLogs = new logs.LogGroup(scope, 'ApiAccessLogs', {
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    this.stage = new apigwv2.HttpStage(scope, 'DefaultStage', {
      httpApi: this.api,
      stageName: '$default',
      autoDeploy: true,
      throttle: props.throttle,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(accessLogs),
        // Request metadata only: no headers (they carry tokens), no bodies, no query strings.
        format: apigw.AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            time: '$context.requestTime',
            ip: '$context.identity.sourceIp',
            method: '$context.httpMethod',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            latencyMs: '$context.responseLatency',
            integrationLatencyMs: '$context.integrationLatency',
            integrationStatus: '$context.integration.status',
            integrationError: '$context.integrationErrorMessage',
            userAgent: '$context.identity.userAgent',
          }),
        ),
      },
    });
  }

  /**
   * Throttles the sign-in routes (SIGNIN_ROUTES, as addApiRoutes returned them) per route, below the stage's default.
   * The stage then waits for them: CloudFormation refuses route settings for a route key that does not exist yet.
   */
  throttleSigninRoutes(signinRoutes: ReadonlyArray<ApiRoute>): void {
    const stageResource = this.stage.node.defaultChild as apigwv2.CfnStage;
    stageResource.routeSettings = Object.fromEntries(
      signinRoutes.map(({ routeKey }) => [
        routeKey,
        {
          ThrottlingRateLimit: this.signinThrottle.rateLimit,
          ThrottlingBurstLimit: this.signinThrottle.burstLimit,
        },
      ]),
    );
    for (const { route } of signinRoutes) this.stage.node.addDependency(route);
  }
}

/** A route added by addApiRoutes, with its route key ("POST /v1/login"). */
export interface ApiRoute {
  id: string;
  routeKey: string;
  route: apigwv2.HttpRoute;
}

/**
 * Adds, in `scope` (a feature's stack), the routes of `plan` to `api`: one per mounted row to its handler's function,
 * and $default to the handler whose `defaultRoute` is set. Returns the sign-in routes (SIGNIN_ROUTES), which the
 * stage throttles.
 *
 * The routes are created under a construct named `Api`, with the ids HttpApi.addRoutes gives them, so their logical
 * IDs are those they had as children of the API in a single stack.
 */
export function addApiRoutes(
  scope: Construct,
  api: apigwv2.IHttpApi,
  plan: readonly PlannedFunction[],
  functionOf: (handler: string) => lambda.IFunction,
): ApiRoute[] {
  const routesScope = new Construct(scope, 'Api');
  const signinRoutes: ApiRoute[] = [];
  const added: apigwv2.HttpRoute[] = [];
  for (const planned of plan) {
    if (planned.defaultRoute) {
      // Whatever no route matches gets {error: 'not_found', message} from the service, not API Gateway's own body.
      added.push(
        new apigwv2.HttpRoute(routesScope, 'DefaultRoute', {
          httpApi: api,
          routeKey: apigwv2.HttpRouteKey.DEFAULT,
          integration: new HttpLambdaIntegration(
            `${planned.constructId}Integration`,
            functionOf(planned.handler),
            { payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0 },
          ),
        }),
      );
    }
    if (planned.routes.length === 0) continue;
    // One integration per function, shared by its rows, with one invoke permission for this API: a permission per
    // route would cost a resource per row. Only the routes integrated with the function reach it either way.
    const integration = new HttpLambdaIntegration(
      `${planned.constructId}Integration`,
      functionOf(planned.handler),
      { payloadFormatVersion: apigwv2.PayloadFormatVersion.VERSION_2_0, scopePermissionToRoute: false },
    );
    for (const row of planned.routes) {
      const method = apigwv2.HttpMethod[row.method];
      const route = new apigwv2.HttpRoute(routesScope, `${method}${row.path}`, {
        httpApi: api,
        routeKey: apigwv2.HttpRouteKey.with(row.path, method),
        integration,
      });
      added.push(route);
      if (SIGNIN_ROUTES.includes(row.id)) {
        signinRoutes.push({ id: row.id, routeKey: `${row.method} ${row.path}`, route });
      }
    }
  }
  for (const route of added) {
    Validations.of(route).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason:
        'Authorization is enforced in every function by the route table auth kind (bearer JWTs and roles, device ' +
        'certificate signatures over the raw body, which no gateway authorizer can verify); public routes are public ' +
        'by the spec (health check, OpenAPI document, sign-in); the $default route only answers 404 not_found.',
    });
  }
  return signinRoutes;
}
