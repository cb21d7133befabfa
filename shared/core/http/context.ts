// What a request carries through the middleware chain, on middy's `request.context` (the Lambda context, extended),
// and what a handler receives: the context typed for its route's authentication, so a handler of a signed-in route
// has a `principal` and a device route a `device`, by type.
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyStructuredResultV2,
  Context as LambdaContext,
} from 'aws-lambda';
import type { Principal } from '../auth/principal.ts';
import type { Config } from '../config/schema.ts';
import type { Db } from '../db/database.ts';
import type { Logger } from '../logger.ts';
import type { Runtime } from '../runtime.ts';
import type { AuthKind } from './route.ts';

/** What a verified signed device request proves. */
export interface VerifiedDeviceRequest {
  fingerprint: string;
  keyType: 'p256' | 'ed25519';
  certificatePem: string;
  notBefore: Date;
  notAfter: Date;
  /** SHA-256 of the signature bytes: the replay key. */
  signatureHash: string;
  /** Until when the replay record must be kept (the end of the freshness window). */
  replayUntil: Date;
}

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

/** Everything a handler gets besides its parsed input, whatever its route. */
export interface RequestBase {
  requestId: string;
  log: Logger;
  runtime: Runtime;
  config: Config;
  db: Db;
  sourceIp: string;
  headers: Record<string, string | undefined>;
  event: HttpEvent;
  /**
   * The request body text as received (base64 decoded when API Gateway encoded it), before parsing; set, once
   * decoded strictly as UTF-8, on the routes that take a body (requestText).
   */
  rawBody: string | undefined;
  /** Size of the request body as received. */
  rawBodyBytes: number;
}

/** What the middlewares add to the Lambda context as the request goes through them. */
export interface RequestState extends RequestBase {
  started: number;
  /** The signed-in person (bearerAuth). */
  principal?: Principal;
  /** The verified device request (a device authenticator). */
  device?: VerifiedDeviceRequest;
  /** The body as parsed from JSON, before validation: what a device signed (jsonBody). */
  parsedBody?: unknown;
  /** The validated params, query and body (validate). */
  input?: { params: unknown; query: unknown; body: unknown };
  /** Run when validation refuses the body of an authenticated request (shared/devices/device-signature.ts). */
  beforeBodyRejected?: () => Promise<void>;
}

/** middy's `request.context`: the Lambda context and the request's state, filled in by the middlewares. */
export type ServiceContext = LambdaContext & Partial<RequestState>;

type WithPrincipal<A extends AuthKind> = A extends 'user' | 'admin' | 'device+user'
  ? { principal: Principal }
  : unknown;
type WithDevice<A extends AuthKind> = A extends 'device' | 'device+user'
  ? { device: VerifiedDeviceRequest }
  : unknown;

/** The context a handler of a route with authentication `A` receives. */
export type ContextFor<A extends AuthKind> = RequestBase & WithPrincipal<A> & WithDevice<A>;

/**
 * The handler's context, once the chain has run: what its route's authentication proved is there (a missing piece
 * is a chain built wrong, not a request to refuse).
 */
export function contextFor<A extends AuthKind>(auth: A, context: ServiceContext): ContextFor<A> {
  const needs = {
    principal: auth === 'user' || auth === 'admin' || auth === 'device+user',
    device: auth === 'device' || auth === 'device+user',
  };
  if (!context.requestId || !context.runtime) throw new Error('requestContext has not run');
  if (needs.principal && !context.principal) throw new Error(`a ${auth} route ran without a principal`);
  if (needs.device && !context.device) throw new Error(`a ${auth} route ran without a verified device`);
  return context as ContextFor<A>;
}
