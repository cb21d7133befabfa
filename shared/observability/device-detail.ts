// A device with its inventory, as GET /v1/admin/devices/{id} returns it, for the features that read it outside
// observability (the inventory exports, shared/exports/delivery/classes.ts).
import type * as z from 'zod';
import type { Config } from '../core/config/schema.ts';
import type { Db } from '../core/db/database.ts';
import { getDevice } from './fleet/fleet.ts';
import { deviceDetailResponse } from './schemas.ts';

export type DeviceDetail = z.output<typeof deviceDetailResponse>['data'];

/** The device as the route answers it, checked against the route's schema; throws 404 when there is none. */
export async function deviceDetail(db: Db, config: Config, id: string): Promise<DeviceDetail> {
  return deviceDetailResponse.shape.data.parse(await getDevice(db, config, id));
}
