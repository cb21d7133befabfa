// Whatever a stored event holds, its exports never carry the prompt, the free-form metadata (tool arguments and
// results) or the error message (which may echo arguments), and every OCSF event is valid against our schema.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { runs } from '#test/support/runs.ts';
import { toOcsfApiActivity } from '../../../shared/exports/ocsf.ts';
import { toOtelMetrics, toOtelTraces } from '../../../shared/exports/otel.ts';
import type { StoredEvent } from '../../../shared/exports/source.ts';
import { allowedEvent } from './fixtures.ts';
import { validateOcsf } from './ocsf-schema.ts';

/** A token no generated name can contain: the arbitraries below draw from a plain alphabet. */
const MARK = '\u00a7SECRET\u00a7';
const name = fc.stringMatching(/^[a-z][a-z0-9_.-]{0,30}$/);
const content = fc.string({ maxLength: 40 }).map((s) => `${MARK}${s}`);
const contentKey = fc.constantFrom('args', 'arguments', 'result', 'prompt', 'content', 'input', 'output');

const storedEvent: fc.Arbitrary<StoredEvent> = fc
  .record({
    id: fc.bigInt({ min: 1n, max: 999_999_999_999n }).map(String),
    result: fc.constantFrom('allowed', 'denied', 'error' as const),
    agent_type: name,
    mcp_name: name,
    tool: name,
    session_id: fc.option(name, { nil: null }),
    model: fc.option(name, { nil: null }),
    actor_email: fc.option(
      name.map((n) => `${n}@example.com`),
      { nil: null },
    ),
    source_ip: fc.option(fc.ipV4(), { nil: null }),
    rule_applied: fc.option(name, { nil: null }),
    tokens_in: fc.nat(1_000_000),
    tokens_out: fc.nat(1_000_000),
    duration_ms: fc.nat(86_400_000),
    event_time: fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }),
    prompt: fc.option(content, { nil: null }),
    error_message: fc.option(content, { nil: null }),
    metadata: fc.option(fc.dictionary(contentKey, content, { minKeys: 1 }), { nil: null }),
    skills: fc.array(content, { maxLength: 3 }),
  })
  .map((e) => ({
    ...allowedEvent,
    ...e,
    event_time: e.event_time.toISOString(),
    deny_code: e.result === 'denied' ? 'policy_denied' : null,
    deny_reason: e.result === 'denied' ? 'Denied by policy' : null,
    rule_applied: e.result === 'denied' ? e.rule_applied : null,
  }));

describe('exports: no content leaves', () => {
  test('no prompt, metadata, skills or error message in any shape; every OCSF event valid', () => {
    fc.assert(
      fc.property(
        storedEvent,
        fc.constantFrom('stdio', 'http', 'sse', undefined),
        fc.option(fc.integer({ min: -32768, max: -32000 }).map(String), { nil: undefined }),
        (event, transport, error_code) => {
          const source = { event, transport, error_code };
          const ocsf = toOcsfApiActivity(source);
          assert.ok(validateOcsf(ocsf), JSON.stringify(validateOcsf.errors));
          const out = JSON.stringify([toOtelTraces(source), toOtelMetrics(source), ocsf]);
          assert.ok(!out.includes(MARK), out);
          for (const key of [
            '"args"',
            '"arguments"',
            '"result"',
            '"prompt"',
            '"content"',
            '"error_message"',
          ]) {
            assert.ok(!out.includes(`${key}:`), `${key} in ${out}`);
          }
          // The conventions' opt-in content attributes stay off.
          assert.ok(
            !/"key":"gen_ai\.(tool\.call\.(arguments|result)|input|output|prompt|system_instructions)/.test(
              out,
            ),
          );
        },
      ),
      { numRuns: runs(500) },
    );
  });
});
