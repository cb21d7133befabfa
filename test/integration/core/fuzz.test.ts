// A property-based fuzz of every operation of the OpenAPI document (test/support/fuzz-requests.ts): each case is a
// valid request with real credentials, with one part broken. For every case: no 5xx, every 4xx exactly
// {error, message}, the status and body as the document says, and a refused request stores nothing. A failure is
// shrunk to a small case and printed with the seed and path that replay it.
//
// Bounded for npm test: FUZZ_RUNS cases per operation (default 20; test:fast runs fewer, test/support/runs.ts).
// FUZZ_SEED replays a run (default: a fixed seed, so the suite is deterministic; `FUZZ_SEED=random` explores),
// FUZZ_OPS=opId,opId narrows to some operations.
// npm run bench:fuzz runs tens of thousands of cases with the same generators.
//
// It runs on every driver: PGlite is quick and catches most; PostgreSQL is the point, since its casts and text
// rules (and node-postgres's parameter encoding) are where malformed input becomes a 500; the Data API maps
// parameters and errors in its own way (typed fields, its own exceptions), which is another place for them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { driversUnderTest } from '#test/support/databases.ts';
import { invocationEvent } from '#test/support/device-requests.ts';
import {
  caseArbitrary,
  caseFor,
  describeOutcome,
  FUZZ_SERVICE_OVERRIDES,
  type FuzzWorld,
  operations,
  prepareWorld,
  RawJson,
  rawBytesCase,
  runCase,
  sampleCase,
} from '#test/support/fuzz-requests.ts';
import { demoOrdersRequest } from '#test/support/request-fixtures.ts';
import { runs } from '#test/support/runs.ts';
import { startTestService, type TestService } from '#test/support/service.ts';

const RUNS = runs(20, { variable: 'FUZZ_RUNS' });
const SEED =
  process.env.FUZZ_SEED === 'random'
    ? Math.floor(Math.random() * 2 ** 31)
    : Number(process.env.FUZZ_SEED ?? 20261125);
const ONLY = process.env.FUZZ_OPS?.split(',').map((s) => s.trim());
const selected = operations.filter((op) => !ONLY || ONLY.includes(op.operationId));

for (const driver of driversUnderTest()) {
  describe(`fuzz of every operation on ${driver}`, () => {
    let svc: TestService;
    let world: FuzzWorld;
    before(async () => {
      svc = await startTestService(driver, FUZZ_SERVICE_OVERRIDES);
      world = await prepareWorld(svc);
    });
    after(async () => svc?.dispose());

    test(`${RUNS} cases for each of ${selected.length} operations: no 5xx, 4xx {error, message}, refused stores nothing`, {
      timeout: 300_000,
    }, async (t) => {
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      for (const op of selected) {
        let last = '';
        const details = await fc.check(
          fc.asyncProperty(caseArbitrary(op, world), async (c) => {
            const outcome = await runCase(world, c);
            statuses.set(outcome.status, (statuses.get(outcome.status) ?? 0) + 1);
            if (outcome.problems.length) {
              last = describeOutcome(c, outcome);
              throw new Error(last);
            }
          }),
          { seed: SEED, numRuns: RUNS, endOnFailure: false },
        );
        if (details.failed) {
          failures.push(
            `${last}\n  replay: FUZZ_SEED=${SEED} FUZZ_OPS=${op.operationId} (fast-check path ${details.counterexamplePath}, ${details.numShrinks} shrinks)`,
          );
        }
      }
      t.diagnostic(
        `seed ${SEED}; answers: ${[...statuses]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}`,
      );
      if (failures.length) assert.fail(`${failures.length} operations failed:\n\n${failures.join('\n\n')}`);
    });

    test('bytes that are not UTF-8, sent raw in a string of every body: 400 naming that string, nothing stored', async () => {
      const wrong: string[] = [];
      const writes = selected.filter((o) => o.body);
      for (const op of writes) {
        for (const bytes of [[0xff], [0xed, 0xa0, 0x80], [0xf0, 0x90, 0x80], [0xc0, 0xaf]]) {
          const c = rawBytesCase(op, world, bytes);
          const outcome = await runCase(world, c);
          if (outcome.problems.length) wrong.push(describeOutcome(c, outcome));
        }
      }
      assert.deepEqual(wrong, []);
      assert.ok(ONLY || writes.length >= 15, `${writes.length} routes with a body`);
    });

    test('a body in another charset than UTF-8 (Latin-1, UTF-16) on every route that takes one: 415 naming the header, nothing stored', async () => {
      const wrong: string[] = [];
      for (const op of selected.filter((o) => o.body)) {
        const valid = sampleCase(op, world);
        for (const contentType of ['application/json; charset=latin1', 'application/json; charset=UTF-16']) {
          const c = {
            ...valid,
            contentType,
            expect: {
              status: op.statuses.includes('415') ? 415 : 400,
              error: 'unsupported_charset',
              message: /^Content-Type: charset=/i,
            },
          };
          const outcome = await runCase(world, c);
          if (outcome.problems.length) wrong.push(describeOutcome(c, outcome));
        }
      }
      assert.deepEqual(wrong, []);
    });

    test('what it found, as it answers now: 400/401/404 {error, message}, nothing stored', async () => {
      const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
      let group: unknown = { conditions: [{ condition: { column: 'id', op: 'eq', value: 1 } }] };
      for (let i = 0; i < 200; i++) group = { conditions: [{ group }] };
      const deepFilters = demoOrdersRequest('deep filters');
      (deepFilters.scope.datasources[0]!.datasets[0] as Record<string, unknown>).filters = group;
      const request = world.ids.requests![0]!;
      const found: Array<[ReturnType<typeof caseFor>, number, string, RegExp]> = [
        // A path segment that is not percent-encoded UTF-8: the local gateway's decodeURIComponent threw (500), then
        // no route matched (404); it is refused naming the parameter, as a query value is.
        [
          caseFor('getRequest', { path: { id: '%ZZ' } }),
          400,
          'validation_failed',
          /^path\.id: is not percent-encoded UTF-8 \(%ZZ\)$/,
        ],
        [
          caseFor('obsGetDevice', { path: { id: '%ED%A0%80' } }),
          400,
          'validation_failed',
          /^path\.id: is not percent-encoded UTF-8 \(%ED%A0%80\)$/,
        ],
        [
          caseFor('cliAuthorize', { query: 'state=%FF' }),
          400,
          'validation_failed',
          /^query\.state: is not percent-encoded UTF-8 \(%FF\)$/,
        ],
        // A lone surrogate: PostgreSQL's jsonb refused the \ud800 escape, the audit chain's JCS had no form (500).
        [
          caseFor('ingestEvents', {
            body: { value: { events: [invocationEvent({ metadata: { note: '\ud800' } })] } },
          }),
          400,
          'validation_failed',
          /body\.events\[0\]\.metadata\.note: must be valid Unicode: it holds a lone surrogate \(U\+D800\)/,
        ],
        [
          caseFor('ingestAuditLogs', {
            body: {
              value: {
                records: [{ action_type: 'x', timestamp: new Date().toISOString(), actor_email: 'a\udfff' }],
              },
            },
          }),
          400,
          'validation_failed',
          /body\.records\[0\]\.actor_email: must be valid Unicode/,
        ],
        [
          caseFor('createCatalogEntry', {
            body: { value: { datasource_id: 'd', datasource_name: 'd', schema: { '\ud800': 1 } } },
          }),
          400,
          'validation_failed',
          /^body\.schema\["\\ud800"\]: must be valid Unicode/,
        ],
        // Nesting thousands of levels deep: the NUL check, then zod on nested filter groups, overflowed the stack (500).
        [
          caseFor('queryRequest', { path: { id: request }, body: { text: deep(10_000) } }),
          400,
          'validation_failed',
          /nests deeper than 512 levels/,
        ],
        [
          caseFor('denyRequest', { path: { id: request }, body: { text: deep(10_000) } }),
          400,
          'validation_failed',
          /nests deeper than 512 levels/,
        ],
        [
          caseFor('createRequest', { body: { value: deepFilters } }),
          400,
          'validation_failed',
          /^body\.scope\.datasources\[0\]\.datasets\[0\]\.filters\.conditions\[0\]: nests deeper than 512 levels/,
        ],
        // Times that RFC 3339 allows and PostgreSQL does not take (year 0000, a UTC year past 9999 once a range is
        // widened to whole weeks, an offset past ±15:59): 500s from the database (22008, 22009).
        [
          caseFor('obsObservabilityFilters', { query: 'to=9999-12-31T23%3A59%3A59Z' }),
          400,
          'validation_failed',
          /^query\.to: must be between 0002-01-01 and 9998-12-31 \(UTC\)$/,
        ],
        [
          caseFor('obsListDevices', { query: 'last_seen_before=0000-01-01T00%3A00%3A00Z' }),
          400,
          'validation_failed',
          /^query\.last_seen_before: must be between/,
        ],
        [
          caseFor('obsListEvents', { query: 'from=2026-01-01T00%3A00%3A00-23%3A59' }),
          400,
          'validation_failed',
          /^query\.from: has a zone offset past ±15:59$/,
        ],
        [
          caseFor('ingestAuditLogs', {
            body: { value: { records: [{ action_type: 'x', timestamp: '0000-01-01T00:00:00Z' }] } },
          }),
          400,
          'validation_failed',
          /body\.records\[0\]\.timestamp: must be between/,
        ],
        [
          caseFor('ingestEvents', {
            body: { value: { events: [invocationEvent({ event_time: '9999-12-31T23:59:59-12:00' })] } },
          }),
          400,
          'validation_failed',
          /body\.events\[0\]\.event_time: must be between/,
        ],
        [
          caseFor('ingestEvents', {
            body: { value: { events: [invocationEvent({ event_time: '2026-02-30T10:00:00Z' })] } },
          }),
          400,
          'validation_failed',
          /body\.events\[0\]\.event_time: is not a real date/,
        ],
        // Register canonicalizes the body to check its signature: the canonicalizer overflowed the stack (500).
        [
          caseFor('registerDevice', {
            body: { value: { serialNumber: 'SN-DEEP', brand: 'b', model: new RawJson(deep(5_000)) } },
          }),
          401,
          'invalid_signature',
          /no RFC 8785 canonical form.*nests deeper than 1000 levels/,
        ],
      ];
      for (const [c, status, error, message] of found) {
        const outcome = await runCase(world, c);
        const where = describeOutcome(c, outcome);
        assert.deepEqual(outcome.problems, [], where);
        assert.equal(outcome.status, status, where);
        assert.equal(outcome.error, error, where);
        assert.match(String((JSON.parse(outcome.text) as { message: string }).message), message, where);
      }
    });
  });
}
