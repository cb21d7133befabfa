import { registerDevice } from '#shared/domain/devices.ts';
import { httpHandler } from '#shared/http/handler.ts';
import { deviceSignature } from '#shared/http/middleware/device-signature.ts';
import { flat } from '#shared/http/reply.ts';
import { cliSigninEnabled, routes } from '#shared/routes.ts';

export const handler = httpHandler(
  routes.registerDevice,
  async ({ body }, { config, db, device, principal, sourceIp }) => {
    const result = await registerDevice(db, body, device, principal, sourceIp, {
      enrollmentOpen: cliSigninEnabled(config),
    });
    return flat(
      {
        deviceId: result.deviceId,
        certificateFingerprint: result.certificateFingerprint,
        ownerAssigned: true,
      },
      result.created ? 201 : 200,
    );
  },
  { deviceAuth: deviceSignature({ signatureInBody: true, enrollment: 'none' }) },
);
