// Every value ever committed to this repository as a secret that signs or authenticates (auth.jwt_secret,
// audit.ingest_token, envsvc.token; in config files, the sam local env file, the README and tests), as SHA-256 hex
// digests. They are public with the repository's history, so a configuration that uses one is refused at startup
// (shared/core/config/schema.ts): a token signed with it would prove nothing. test/unit/core/config/committed-secrets.test.ts
// holds the strings and checks this list against them; add the digest of any new one here.
import { createHash } from 'node:crypto';

const COMMITTED_SECRET_SHA256: ReadonlySet<string> = new Set([
  // JWT secrets: config/local.toml and infra/sam-local.env.json, then tests, test support and the synth placeholder.
  '4d42f5d21fc114cb6b9747b3a654ab81504a85019bae596f8006075079c95270',
  'c12666e41d0b66c2307badb4df190811c803fbdbe811c887aa4b5a80fe3a9135',
  'f176423345a8f1144903094c14f1ee92ab0d304abfdfd195fe8f280906c045dd',
  'faee9c553ae49a86605d4a1b8001d918c37162ede7c51f8b9366b192c5c659bb',
  '02ad30e0b3f8d9434b135e7ca08755177f9f8b497674233427bbca5bcf7c63ad',
  'e4f6cd67778dd22f07656000aa7ceaaa1fd976a8219fa6fd0677803e962cc932',
  'd3254b90d7bf4094c58c68edc4e5fbc8b4ba0b46ed1da8854acf79db714eca57',
  '32228e13dcb30a1ab6ef0de7920de4f29569a4fbc8ead546734f6be5b1a9c24e',
  'd4fcf09f212bd8bcb29d434208a9b02069a62a03b204bfc4c0877f53414ca41a',
  '0ec3f6e57a69c29364eb78df550cffc969ff9e04dd8ccd6b2e5e41f0df1a6530',
  // The log shipper's tokens: infra/sam-local.env.json, the README, tests.
  '986eca8ff6e925b00b2ac5e91783885b65a7d3fd7764ec07a3a9fa43096924b2',
  '51c9c9a192bcde2c39a89b215a980adb4cef8637c2d201efcf085c0e7a922fff',
  '4a818b69e59d307d9e11bc59daa7b2bb181bcf28630a6bdb4ddfdd1f256fbfcc',
  '32f1ac3512689bc72239a062e83883d32bfcd5d4292d45b8dbd26befeab1c4a9',
  '28ffe9a69482df9bf481cefe8ea8823820e46a963e48a7540f422fc505142a97',
  'ab9280716e2977fb7979afe123da6f5a066c2639fd851ad685a76fc2b138215e',
  // The environment service's tokens: infra/sam-local.env.json, tests.
  '2261169001684d26cfc9ebfecfbcf76369590c000e73b901cc9a6745a9d81391',
  '24276d00ebd6de3997d2039b4d63ae76cc3cfe3a509ccd0f619dcd3dfe6ade77',
  'f223a715fa3743f14cac749d9f3ffbf828fb43fb345a3b2ba0607b9b5a6e2f42',
  'f3439b8c64b5f9e3a0363e4afd3a20b83cbf0668d17e91f34c6944b3208fcd86',
  '0394c1b151647894c3006a1d8ac9fd902629e3eb38a163e49c4e256e06f33752',
  'c9164f064a6892b9f1443cf8d0b96f3d0e8e6bedb5c92d39696bbdb1e8161ee0',
  // Secret values the Secrets Manager tests read.
  '571a8d837362889768573433b310fb94ddbb877bc1d306a06bdd37d32b531ad3',
  'e6c02a5742ea9d4de588eb9b9de7bed43dc17011552186bed3e98b2c5958ff4a',
  // One character repeated, as tests wrote secrets: 's', 't', 'x', 'y', 'z' × 40, 'x' × 32, 'é' × 16.
  '3923fb8348df77529b04f6f536b8204856d0501d031063de795c57ad693b288f',
  '6a87499eebbac68617673349b2d323e5a7974f5f71745fff8b5160ecf6243b40',
  'bd913ff68243d41b9611b2690dfbf2b0f6e42ea14536a98232af60e9f64ffdaa',
  '8c97df4100b89fc982f0517a51dd93929f4de176e26e87291ecb09fc9a1bb992',
  'eb90d2a5d7d771b2a83c96e180722ae5608f68611f2dcdc865342d7bd332ae56',
  'c62e4615bd39e222572f3a1bf7c2132ea1e65b17ec805047bd6b2842c593493f',
  '50bf38cd3a4cd50253ce1a111c563d20cba703333cf9fdc582ee0179b88da30b',
]);

export const committedSecretDigests = (): ReadonlySet<string> => COMMITTED_SECRET_SHA256;

/** Whether `value` is one of the committed secrets (compared by digest, so the list holds no secret itself). */
export const isCommittedSecret = (value: string): boolean =>
  COMMITTED_SECRET_SHA256.has(createHash('sha256').update(value, 'utf8').digest('hex'));
