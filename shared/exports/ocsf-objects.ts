// The OCSF pieces every class we emit shares, in one place: the version, each class's place in the taxonomy and the
// type_uid it gives an activity, metadata naming our product, severity and status, users and endpoints.
import { isIP } from 'node:net';
import { PRODUCT } from './source.ts';

export const OCSF_VERSION = '1.8.0';

/** The classes we emit: category (categories.json) and class (events/<category>/<class>.json, uid = category × 1000 + its uid). */
export const OCSF_CLASSES = {
  detectionFinding: {
    category_uid: 2,
    category_name: 'Findings',
    class_uid: 2004,
    class_name: 'Detection Finding',
  },
  userAccess: {
    category_uid: 3,
    category_name: 'Identity & Access Management',
    class_uid: 3005,
    class_name: 'User Access Management',
  },
  deviceInventory: {
    category_uid: 5,
    category_name: 'Discovery',
    class_uid: 5001,
    class_name: 'Device Inventory Info',
  },
  softwareInventory: {
    category_uid: 5,
    category_name: 'Discovery',
    class_uid: 5020,
    class_name: 'Software Inventory Info',
  },
  apiActivity: {
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: 6003,
    class_name: 'API Activity',
  },
  datastoreActivity: {
    category_uid: 6,
    category_name: 'Application Activity',
    class_uid: 6005,
    class_name: 'Datastore Activity',
  },
} as const;

export type OcsfClassKey = keyof typeof OCSF_CLASSES;

/** The classification attributes of an event: its class, its activity, and type_uid = class_uid × 100 + activity_id. */
export interface OcsfClassification<K extends OcsfClassKey, A extends number = number> {
  activity_id: A;
  activity_name: string;
  category_uid: (typeof OCSF_CLASSES)[K]['category_uid'];
  category_name: (typeof OCSF_CLASSES)[K]['category_name'];
  class_uid: (typeof OCSF_CLASSES)[K]['class_uid'];
  class_name: (typeof OCSF_CLASSES)[K]['class_name'];
  type_uid: number;
  type_name: string;
}

export function classification<K extends OcsfClassKey, A extends number>(
  key: K,
  activity_id: A,
  activity_name: string,
): OcsfClassification<K, A> {
  const c = OCSF_CLASSES[key];
  return {
    activity_id,
    activity_name,
    category_uid: c.category_uid,
    category_name: c.category_name,
    class_uid: c.class_uid,
    class_name: c.class_name,
    type_uid: c.class_uid * 100 + activity_id,
    type_name: `${c.class_name}: ${activity_name}`,
  };
}

/** severity_id and its caption (dictionary.json, base event). */
export const SEVERITY = {
  informational: { severity_id: 1, severity: 'Informational' },
  low: { severity_id: 2, severity: 'Low' },
  medium: { severity_id: 3, severity: 'Medium' },
  high: { severity_id: 4, severity: 'High' },
} as const;
export type OcsfSeverity = (typeof SEVERITY)[keyof typeof SEVERITY];

/** An activity's status_id and its caption (dictionary.json, base event). */
export const SUCCESS = { status_id: 1, status: 'Success' } as const;
export const FAILURE = { status_id: 2, status: 'Failure' } as const;

/** security_control profile: the action taken and its disposition. */
export const ALLOWED = {
  action_id: 1,
  action: 'Allowed',
  disposition_id: 1,
  disposition: 'Allowed',
} as const;
export const BLOCKED = { action_id: 2, action: 'Denied', disposition_id: 2, disposition: 'Blocked' } as const;

/** How an activity under the security_control profile ended: how bad, whether it worked, whether it was let through. */
export interface OcsfControlledOutcome {
  severity_id: 1 | 2 | 3;
  severity: 'Informational' | 'Low' | 'Medium';
  status_id: 1 | 2;
  status: 'Success' | 'Failure';
  status_code?: string;
  action_id: 1 | 2;
  action: 'Allowed' | 'Denied';
  disposition_id: 1 | 2;
  disposition: 'Allowed' | 'Blocked';
}

export interface OcsfMetadata {
  version: typeof OCSF_VERSION;
  product: { name: string; vendor_name: string };
  profiles?: string[];
  labels?: string[];
  uid: string;
  logged_time?: number;
  correlation_uid?: string;
}

/** metadata: the version, our product, and the event's own uid (stable across replays, so a receiver can dedupe). */
export function metadataOf(
  uid: string,
  extra: Omit<OcsfMetadata, 'version' | 'product' | 'uid'> = {},
): OcsfMetadata {
  return {
    version: OCSF_VERSION,
    product: { name: PRODUCT.name, vendor_name: PRODUCT.vendor_name },
    uid,
    ...extra,
  };
}

export interface OcsfUser {
  uid?: string;
  name?: string;
  email_addr?: string;
  type_id?: number;
  type?: string;
}

/** A user from what the service records; empty strings are absent facts, not values. */
export function userOf(fields: { uid?: string; name?: string; email?: string }): OcsfUser {
  const out: OcsfUser = {};
  if (fields.uid) out.uid = fields.uid;
  if (fields.name) out.name = fields.name;
  if (fields.email) out.email_addr = fields.email;
  return out;
}

/** The service itself as a user (a scheduled expiry): user type_id 3 System. */
export const SYSTEM_USER: OcsfUser = { uid: 'system', name: 'system', type_id: 3, type: 'System' };

/** ip_t is an address: whatever else a request context recorded stays out rather than failing the event. */
export function ipOf(text: string | null | undefined): string | undefined {
  return text && isIP(text) !== 0 ? text : undefined;
}

/** Milliseconds since the epoch (timestamp_t) of an ISO time. */
export const epochMs = (iso: string): number => Date.parse(iso);
