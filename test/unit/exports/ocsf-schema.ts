// Our written-down OCSF 1.8.0 schema of API Activity, compiled once for the tests that validate mapped events.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const schema = JSON.parse(
  readFileSync(
    new URL('../../../shared/exports/ocsf-1.8.0-api-activity.schema.json', import.meta.url),
    'utf8',
  ),
);
// Strict, so a keyword the schema misspells fails; the x-ocsf-* annotations record OCSF's own facts.
const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
ajv.addVocabulary(['x-ocsf-version', 'x-ocsf-sources', 'x-ocsf-type', 'x-ocsf-requirement']);
addFormats.default(ajv);

export const validateOcsf = ajv.compile(schema);
