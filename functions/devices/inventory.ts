import { replaceInventory } from '#shared/domain/inventory.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { deviceSignature } from '#shared/http/middleware/device-signature.ts';
import { flat } from '#shared/http/reply.ts';
import { routes } from '#shared/routes.ts';

export const handler = httpHandler(
  routes.reportInventory,
  async ({ body }, { db, device }) => flat({ success: true, ...(await replaceInventory(db, device, body)) }),
  { deviceAuth: deviceSignature({ signatureInBody: false, enrollment: 'in-write' }) },
);
