// The one shape every export destination implements: the delivery loop (shared/exports/delivery/) hands it a batch
// of mapped events and reads back whether they landed, and when to try again if not.
import type { OcsfClassKey, OcsfMetadata } from '../ocsf-objects.ts';
import type { ExportSource } from '../source.ts';

export type DestinationKind = 'otlp_http' | 'splunk_hec' | 'webhook' | 'security_lake';

export type DeliveryResult =
  | { ok: true }
  | {
      ok: false;
      /** The receiver's HTTP status, when it answered. */
      status?: number;
      /** From Retry-After (429/503), when the receiver gave one. */
      retryAfterMs?: number;
      /** True when sending the same batch again cannot succeed (e.g. 400, 401, 403, 404, 413). */
      permanent: boolean;
      /** One line for the API and the console; never a secret, a header or an event's content. */
      message: string;
    };

/** A mapped OCSF event of any class, as a destination places and names it. */
export interface OcsfEvent {
  time: number;
  metadata: Pick<OcsfMetadata, 'uid'>;
}

export interface Destination {
  readonly kind: DestinationKind;
  send(batch: readonly ExportSource[], signal?: AbortSignal): Promise<DeliveryResult>;
  /** Events of another OCSF class (delivery/classes.ts), for the kinds that take them. */
  sendOcsf?(key: OcsfClassKey, events: readonly OcsfEvent[], signal?: AbortSignal): Promise<DeliveryResult>;
}
