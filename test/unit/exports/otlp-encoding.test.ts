// The batch's duration histogram as a collector decodes it (the opentelemetry-proto definitions for protobuf, the
// JSON as sent): one point per resource and attribute set, whose count, sum, min, max, buckets and time span are
// those of the batch's calls of that series, computed here from the events themselves.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { metricsBody, type OtlpEncoding } from '../../../shared/exports/destinations/otlp-encoding.ts';
import type { ExportSource, StoredEvent } from '../../../shared/exports/source.ts';
import { decodeOtlpDurationPoints } from '../../support/export-receivers.ts';
import { ADVISED_DURATION_BOUNDS, allowedEvent, deniedEvent, errorEvent } from './fixtures.ts';

const CONTENT_TYPE: Record<OtlpEncoding, string> = {
  protobuf: 'application/x-protobuf',
  json: 'application/json',
};

/** A batch of `n` calls spread over three tools, two agents, the three results and durations from 0 to 400 s. */
function batch(n: number, seed: number): ExportSource[] {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
  const bases: StoredEvent[] = [allowedEvent, deniedEvent, errorEvent];
  return Array.from({ length: n }, (_, i) => {
    const base = bases[Math.floor(next() * bases.length)] ?? allowedEvent;
    const event: StoredEvent = {
      ...base,
      id: String(10_000 + i),
      agent_type: next() < 0.5 ? 'claude-code' : 'cursor',
      tool: `${base.tool}_${Math.floor(next() * 3)}`,
      event_time: new Date(
        Date.parse('2026-11-20T10:00:00.000Z') + Math.floor(next() * 3_600_000),
      ).toISOString(),
      duration_ms: next() < 0.05 ? 400_000 : Math.floor(next() ** 3 * 20_000),
    };
    return { event, transport: next() < 0.5 ? 'stdio' : 'http' };
  });
}

/** What identifies a point's series here: its resource's service and its attributes, in a stable order. */
const seriesOf = (resource: Record<string, unknown>, attributes: Record<string, unknown>) =>
  JSON.stringify([resource['service.name'], Object.entries(attributes).sort()]);

describe('exports: OTLP duration points of a batch', () => {
  for (const encoding of ['protobuf', 'json'] as const) {
    test(`${encoding}: one point per resource and attribute set, holding exactly that series' calls`, () => {
      const sources = batch(400, encoding === 'json' ? 7 : 11);
      const points = decodeOtlpDurationPoints(
        Buffer.from(metricsBody(sources, encoding)),
        CONTENT_TYPE[encoding],
      );
      const keys = points.map((p) => seriesOf(p.resource, p.attributes));
      assert.equal(new Set(keys).size, points.length, 'a series has one point');
      assert.equal(
        points.reduce((n, p) => n + p.count, 0),
        sources.length,
      );
      for (const point of points) {
        const calls = sources.filter((s) => {
          const a = point.attributes;
          return (
            point.resource['service.name'] === s.event.agent_type &&
            a['gen_ai.tool.name'] === s.event.tool &&
            a['acp.mcp.server.name'] === s.event.mcp_name &&
            a['network.transport'] === (s.transport === 'stdio' ? 'pipe' : 'tcp') &&
            (a['error.type'] === undefined) === (s.event.result === 'allowed')
          );
        });
        assert.equal(point.count, calls.length);
        const seconds = calls.map((s) => s.event.duration_ms / 1000);
        const sum = seconds.reduce((a, b) => a + b, 0);
        assert.ok(Math.abs(point.sum - sum) <= 1e-9 * Math.max(1, sum), `${point.sum} ≠ ${sum}`);
        assert.equal(point.min, Math.min(...seconds));
        assert.equal(point.max, Math.max(...seconds));
        assert.deepEqual(point.explicitBounds, ADVISED_DURATION_BOUNDS);
        const buckets = new Array<number>(ADVISED_DURATION_BOUNDS.length + 1).fill(0);
        for (const v of seconds) {
          const within = ADVISED_DURATION_BOUNDS.findIndex((b) => v <= b);
          const i = within === -1 ? ADVISED_DURATION_BOUNDS.length : within;
          buckets[i] = (buckets[i] ?? 0) + 1;
        }
        assert.deepEqual(point.bucketCounts, buckets);
        const starts = calls.map((s) => Date.parse(s.event.event_time));
        const ends = calls.map((s) => Date.parse(s.event.event_time) + s.event.duration_ms);
        assert.equal(point.startTimeUnixNano, `${Math.min(...starts)}000000`);
        assert.equal(point.timeUnixNano, `${Math.max(...ends)}000000`);
      }
    });
  }
});
