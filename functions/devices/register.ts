import { httpHandler } from '#shared/core/http/handler.ts';
import { flat } from '#shared/core/http/reply.ts';
import { deviceSignature } from '#shared/devices/device-signature.ts';
import { registerDevice } from '#shared/devices/devices.ts';
import { cliSigninEnabled, deviceRoutes as routes } from '#shared/devices/routes.ts';

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
