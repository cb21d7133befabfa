// A small closed-loop HTTP load generator for the benchmarks: N keep-alive connections, fixed duration.
import { Agent, request } from 'node:http';

export interface LoadResult {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export async function load(
  url: string,
  options: { durationMs?: number; connections?: number; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const durationMs = options.durationMs ?? 3000;
  const connections = options.connections ?? 16;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const deadline = performance.now() + durationMs;
  const one = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(url, { agent, headers: options.headers }, (res) => {
        res.resume();
        res.on('end', () => {
          if ((res.statusCode ?? 500) >= 400) errors++;
          latencies.push(performance.now() - started);
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) await one();
    }),
  );
  const elapsed = performance.now() - started;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    requests: latencies.length,
    perSecond: (latencies.length / elapsed) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    errors,
  };
}
