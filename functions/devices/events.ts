import { httpHandler } from '#shared/core/http/handler.ts';
import type { Precheck } from '#shared/core/http/middleware/validate.ts';
import { flat } from '#shared/core/http/reply.ts';
import { deviceSignature } from '#shared/devices/device-signature.ts';
import { checkBatchSize, ingestEvents } from '#shared/devices/events.ts';
import { deviceRoutes as routes } from '#shared/devices/routes.ts';
import { recordSpoolCounters } from '#shared/devices/spool.ts';

/** 1001 events with a bad one are 413, not 400: the bound is checked before every event is validated. */
const batchBound: Precheck = ({ context }) => {
  const events = (context.parsedBody as { events?: unknown } | undefined)?.events;
  if (Array.isArray(events) && context.config) checkBatchSize(context.config, events);
};

export const handler = httpHandler(
  routes.ingestEvents,
  async ({ body }, { db, config, device, sourceIp }) => {
    const result = await ingestEvents(db, config, device, body.events, sourceIp);
    if (body.spool) await recordSpoolCounters(db, result.deviceId, body.spool, new Date(result.receivedAt));
    return flat({ success: true, ...result });
  },
  {
    deviceAuth: deviceSignature({ signatureInBody: false, enrollment: 'in-write' }),
    prechecks: [batchBound],
  },
);
