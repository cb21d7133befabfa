import { deviceAuthenticator } from '#shared/device/authenticate.ts';
import { batchSizePrecheck, ingestEvents } from '#shared/domain/events.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(
  routes.ingestEvents,
  async ({ body }, { db, config, device, sourceIp }) => {
    const result = await ingestEvents(
      db,
      config,
      device as NonNullable<typeof device>,
      body.events,
      sourceIp,
    );
    return flat({ success: true, ...result });
  },
  {
    deviceAuth: deviceAuthenticator({ signatureInBody: false, enrollment: 'in-write' }),
    precheck: batchSizePrecheck,
  },
);
