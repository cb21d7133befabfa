import * as z from 'zod';
import { isoTimestamp } from '../core/schemas/common.ts';

export const healthStatus = z.enum(['ok', 'degraded', 'unavailable']);

export const probeView = z.object({
  status: healthStatus,
  ran_at: isoTimestamp,
  duration_ms: z.number(),
  checks: z.record(z.string(), z.unknown()),
});

export const healthView = z
  .object({
    status: healthStatus,
    version: z.string(),
    env: z.string(),
    uptime_s: z.number(),
    runtime: z.object({ node: z.string(), platform: z.string(), arch: z.string(), lambda: z.boolean() }),
    memory: z.object({ rss_bytes: z.number(), heap_used_bytes: z.number() }),
    database: z.object({
      status: z.enum(['ok', 'unavailable']),
      driver: z.string(),
      latency_ms: z.number().nullable(),
    }),
    cli_signin: z.enum(['enabled', 'disabled']),
    last_probe: probeView.nullable(),
  })
  .meta({ id: 'Health' });
