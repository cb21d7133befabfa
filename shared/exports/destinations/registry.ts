// The destination kinds this service sends to: each one's settings, whether it needs a secret, and how its sender
// is built from settings and secret. The one place that knows every kind.
import * as z from 'zod';
import type { Destination, DestinationKind } from './destination.ts';
import { otlpHttpDestination } from './otlp-http.ts';
import type { SecurityLakeDestination } from './security-lake.ts';
import {
  otlpHttpSettings,
  type SecurityLakeSettings,
  securityLakeSettings,
  splunkHecSettings,
  webhookSettings,
} from './settings.ts';
import { splunkHecDestination } from './splunk-hec.ts';
import { webhookDestination } from './webhook.ts';

export interface SenderOptions {
  timeoutMs: number;
  /** The operator's S3-compatible server for security_lake (config), empty for AWS S3. */
  securityLakeEndpoint?: string;
}

interface Kind<S extends z.ZodType> {
  settings: S;
  /** What the secret is, for messages and docs; a kind that is not `required` works without one, a `refused` one
   * takes none (its credentials are the function's role). */
  secret: { required: boolean; refused?: boolean; what: string };
  create(settings: z.output<S>, secret: string | undefined, options: SenderOptions): Destination;
}

const kind = <S extends z.ZodType>(k: Kind<S>) => k;

/** A JSON object of header names to values, as the OTLP secret holds them. */
const otlpHeaders = z.record(z.string().regex(/^[A-Za-z0-9-]+$/), z.string());

export const DESTINATION_KINDS = {
  otlp_http: kind({
    settings: otlpHttpSettings,
    secret: { required: false, what: 'the headers to send, as a JSON object (e.g. {"api-key": "…"})' },
    create: (settings, secret, { timeoutMs }) =>
      otlpHttpDestination(settings, secret === undefined ? {} : parseHeaders(secret), timeoutMs),
  }),
  splunk_hec: kind({
    settings: splunkHecSettings,
    secret: { required: true, what: 'the HEC token' },
    create: (settings, secret, { timeoutMs }) => splunkHecDestination(settings, secret ?? '', timeoutMs),
  }),
  webhook: kind({
    settings: webhookSettings,
    secret: { required: true, what: 'the HMAC key (at least 32 bytes) or the bearer token' },
    create: (settings, secret, { timeoutMs }) => webhookDestination(settings, secret ?? '', timeoutMs),
  }),
  security_lake: kind({
    settings: securityLakeSettings,
    secret: {
      required: false,
      refused: true,
      what: "the deliver function's role writes to the lake's bucket",
    },
    create: (settings, _secret, options) => securityLakeSender(settings, options),
  }),
} satisfies Record<DestinationKind, Kind<z.ZodType>>;

export type SentKind = keyof typeof DESTINATION_KINDS;
export const SENT_KINDS = Object.keys(DESTINATION_KINDS) as SentKind[];

// The lake's sender loads the S3 client on its first send, so the functions that only manage destinations never
// start it; one sender per settings is kept, its client's connections reused across passes.
const lakeSenders = new Map<string, Destination>();

function securityLakeSender(settings: SecurityLakeSettings, options: SenderOptions): Destination {
  const { timeoutMs, securityLakeEndpoint: endpoint } = options;
  const key = JSON.stringify([settings, timeoutMs, endpoint]);
  const known = lakeSenders.get(key);
  if (known) return known;
  let loaded: Promise<SecurityLakeDestination> | undefined;
  const load = () =>
    (loaded ??= import('./security-lake.ts').then(
      ({ SecurityLakeDestination }) =>
        new SecurityLakeDestination(settings, { timeoutMs, ...(endpoint ? { endpoint } : {}) }),
    ));
  const sender: Destination = {
    kind: 'security_lake',
    async send(batch, signal) {
      return (await load()).send(batch, signal);
    },
    async sendOcsf(key, events, signal) {
      return (await load()).sendOcsf(key, events, signal);
    },
  };
  lakeSenders.set(key, sender);
  return sender;
}

function parseHeaders(secret: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(secret);
  } catch {
    throw new Error('the OTLP secret is not a JSON object of headers');
  }
  const parsed = otlpHeaders.safeParse(value);
  if (!parsed.success) throw new Error('the OTLP secret is not a JSON object of headers');
  return parsed.data;
}

/** The sender of a stored destination; throws (a message without the secret) when it cannot be built. */
export function senderFor(
  kindName: string,
  settings: unknown,
  secret: string | undefined,
  options: SenderOptions,
): Destination {
  if (!(kindName in DESTINATION_KINDS)) throw new Error(`no sender for kind ${kindName}`);
  const k = DESTINATION_KINDS[kindName as SentKind] as Kind<z.ZodType>;
  const parsed = k.settings.safeParse(settings);
  if (!parsed.success) throw new Error('the stored settings are not valid for this kind');
  if (k.secret.required && secret === undefined) throw new Error('the destination has no secret');
  return k.create(parsed.data, secret, options);
}
