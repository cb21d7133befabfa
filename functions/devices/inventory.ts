import { deviceAuthenticator } from '#shared/device/authenticate.ts';
import { replaceInventory } from '#shared/domain/inventory.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(
  routes.reportInventory,
  async ({ body }, { db, device }) => {
    const result = await replaceInventory(db, device as NonNullable<typeof device>, body);
    return flat({ success: true, ...result });
  },
  { deviceAuth: deviceAuthenticator({ signatureInBody: false, enrollment: 'in-write' }) },
);
