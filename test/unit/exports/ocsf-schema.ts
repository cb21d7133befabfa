// Our written-down OCSF 1.8.0 schemas, one per class we emit plus the objects they share, compiled once for the tests
// that validate mapped events.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const load = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../shared/exports/${name}`, import.meta.url), 'utf8'));

// Strict, so a keyword the schema misspells fails; the x-ocsf-* annotations record OCSF's own facts.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
ajv.addVocabulary(['x-ocsf-version', 'x-ocsf-sources', 'x-ocsf-type', 'x-ocsf-requirement']);
addFormats.default(ajv);
ajv.addSchema(load('ocsf-1.8.0-objects.schema.json'));

export const validateOcsf = ajv.compile(load('ocsf-1.8.0-api-activity.schema.json'));
export const validateDeviceInventory = ajv.compile(load('ocsf-1.8.0-device-inventory-info.schema.json'));
export const validateSoftwareInventory = ajv.compile(load('ocsf-1.8.0-software-inventory-info.schema.json'));
export const validateUserAccess = ajv.compile(load('ocsf-1.8.0-user-access-management.schema.json'));
export const validateDatastoreActivity = ajv.compile(load('ocsf-1.8.0-datastore-activity.schema.json'));
export const validateDetectionFinding = ajv.compile(load('ocsf-1.8.0-detection-finding.schema.json'));
