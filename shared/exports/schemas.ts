// Request and response schemas of the admin export-destination routes (docs/exports.md, "Destinations").
import * as z from 'zod';
import { envelope, isoTimestamp } from '../core/schemas/common.ts';
import { nullAsAbsent } from '../core/schemas/input-rules.ts';
import { STREAMED_CLASSES } from './class-positions.ts';

const SENT = ['otlp_http', 'splunk_hec', 'webhook', 'security_lake'] as const;

const name = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be a short lowercase name (a-z, 0-9, _ and -)')
  .meta({ description: 'Unique' });
const secretRef = z
  .string()
  .regex(/^[A-Za-z0-9/_+=.@-]{1,200}$/, 'must be a secret name (letters, digits and /_+=.@-)')
  .meta({
    description:
      "The name of the destination's secret (HEC token, webhook key, OTLP headers as JSON): in AWS the Secrets Manager secret exports.secret_prefix + this name, locally the key of exports.secrets. The value never passes through the API",
  });
const settings = z.record(z.string(), z.unknown()).meta({
  description:
    "The kind's settings (docs/exports.md): URL, encoding, index, the lake's bucket… never a secret",
});

export const destinationIdParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });

export const createDestinationBody = nullAsAbsent(
  z.object({
    kind: z.enum(SENT),
    name,
    settings,
    secret_ref: secretRef.optional(),
    enabled: z.boolean().default(true),
    start: z.enum(['now', 'oldest']).default('now').meta({
      description: '`now`: events stored from now on; `oldest`: every event the database still holds',
    }),
  }),
);
export type CreateDestinationBody = z.output<typeof createDestinationBody>;

export const updateDestinationBody = nullAsAbsent(
  z.object({
    name: name.optional(),
    settings: settings.optional(),
    secret_ref: secretRef.nullable().optional(),
    enabled: z.boolean().optional(),
  }),
);
export type UpdateDestinationBody = z.output<typeof updateDestinationBody>;

export const replayBody = nullAsAbsent(
  z.object({
    from: z.iso
      .datetime({ offset: true, message: 'must be an RFC 3339 timestamp' })
      .meta({ description: 'Events from this event_time on are sent again' }),
  }),
);

const destination = z
  .object({
    id: z.uuid(),
    kind: z.enum(SENT),
    name: z.string(),
    settings: z.record(z.string(), z.unknown()),
    secret_ref: z.string().nullable(),
    enabled: z.boolean(),
    created_at: isoTimestamp,
    updated_at: isoTimestamp,
  })
  .meta({ id: 'ExportDestination', description: 'Where stored events are streamed' });

const count = (description: string) => z.number().int().min(0).meta({ description });

/** One streamed OCSF class's cursor (docs/exports.md, "What streams where"). */
const classStatus = z
  .object({
    class: z.enum(STREAMED_CLASSES),
    sent: z
      .boolean()
      .meta({ description: 'Whether this destination takes the class (a lake naming its source)' }),
    position: z.string().meta({ description: "The class's cursor in its source (docs/exports.md)" }),
    lag_records: count("Records of the class's source after the cursor"),
    lag_seconds: z.number().min(0).meta({
      description:
        "Age of the oldest change of the class's source not delivered yet (a report, an access change, a query, an alert opened or acknowledged); 0 when none",
    }),
    delivered: count('OCSF events of the class delivered'),
    attempts: count('Failed tries since the last success'),
    last_error: z.string().nullable(),
    last_error_permanent: z.boolean(),
    last_success_at: isoTimestamp.nullable(),
    next_attempt_at: isoTimestamp,
  })
  .meta({ id: 'ExportClassStatus' });

const status = z
  .object({
    cursor: z.string().meta({
      description:
        'Where delivery stands: the position (ingest transaction id:event id) of the last event the receiver took',
    }),
    lag_events: count('Stored events not delivered yet'),
    lag_seconds: z
      .number()
      .min(0)
      .meta({ description: 'Age of the oldest event not delivered yet (since it was stored); 0 when none' }),
    delivered: count('Events delivered since the destination was created'),
    resent: count('Events sent again: after a failed try, or by a replay (a receiver may hold them twice)'),
    attempts: count('Failed tries since the last success'),
    last_error: z.string().nullable(),
    last_error_permanent: z.boolean().meta({
      description:
        'The receiver refused the request as such (e.g. 401): the settings or secret need a change',
    }),
    last_status: z
      .number()
      .int()
      .nullable()
      .meta({ description: "The receiver's HTTP status of the last failure" }),
    last_attempt_at: isoTimestamp.nullable(),
    last_success_at: isoTimestamp.nullable(),
    next_attempt_at: isoTimestamp,
    replayed_from: isoTimestamp.nullable(),
    classes: z.array(classStatus).meta({
      description:
        'The other OCSF classes, each on its own cursor; the fields above are the tool calls (API Activity) only',
    }),
  })
  .meta({ id: 'ExportDestinationStatus' });

export const destinationResponse = envelope(destination);
export const destinationListResponse = envelope(z.object({ destinations: z.array(destination) }));
export const destinationStatusResponse = envelope(z.object({ destination, status }));
export const replayResponse = envelope(
  z.object({ destination, status, replayed: count('Events the replay sends again') }),
);
export const deletedResponse = envelope(z.object({ id: z.uuid(), deleted: z.literal(true) }));

export type DestinationView = z.output<typeof destination>;
export type DestinationStatus = z.output<typeof status>;
