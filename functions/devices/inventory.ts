import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { deviceSignature } from '#shared/devices/device-signature.ts';
import { replaceInventory } from '#shared/devices/inventory.ts';
import { deviceRoutes as routes } from '#shared/devices/routes.ts';

export const handler = httpHandler(
  routes.reportInventory,
  async ({ body }, { db, device }) => flat({ success: true, ...(await replaceInventory(db, device, body)) }),
  { deviceAuth: deviceSignature({ signatureInBody: false, enrollment: 'in-write' }) },
);
