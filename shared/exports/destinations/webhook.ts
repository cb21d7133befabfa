// The generic HTTPS webhook: each batch as JSON lines (one event a line), signed as the alert webhooks are
// (x-acp-signature over timestamp + body, shared/alerts/webhooks.ts) or with a bearer token. x-acp-delivery names
// the batch by its events, the same on every retry, so that a receiver can drop a batch it already has.
import { createHash } from 'node:crypto';
import {
  DELIVERY_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  webhookSignature,
} from '../../alerts/webhooks.ts';
import type { ExportSource } from '../source.ts';
import type { Destination } from './destination.ts';
import { postBatch } from './post.ts';
import type { WebhookSettings } from './settings.ts';
import { shapeOf } from './shapes.ts';

/** The batch's id: a digest of its events' ids. */
export const batchId = (batch: readonly ExportSource[]): string =>
  createHash('sha256')
    .update(batch.map((s) => s.event.id).join(','))
    .digest('hex')
    .slice(0, 32);

export function webhookDestination(
  settings: WebhookSettings,
  secret: string,
  timeoutMs: number,
): Destination {
  const shape = shapeOf(settings.shape);
  return {
    kind: 'webhook',
    send(batch, signal) {
      let body = '';
      for (const source of batch) body += `${JSON.stringify(shape(source))}\n`;
      const headers: Record<string, string> = {
        'content-type': 'application/x-ndjson',
        [DELIVERY_HEADER]: batchId(batch),
      };
      if (settings.auth === 'bearer') headers.authorization = `Bearer ${secret}`;
      else {
        const timestamp = String(Math.floor(Date.now() / 1000));
        headers[SIGNATURE_HEADER] = webhookSignature(secret, timestamp, body);
        headers[TIMESTAMP_HEADER] = timestamp;
      }
      return postBatch({ url: settings.url, headers, body, timeoutMs, signal });
    },
  };
}
