import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { isDatabaseResuming } from './errors.ts';

export interface DataApiClientOptions {
  region?: string | undefined;
  endpoint?: string | undefined;
  /** Total time to keep retrying while Aurora resumes from auto-pause; API Gateway gives up at 30 s. */
  resumeBudgetMs?: number;
}

export { isDatabaseResuming };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function createDataApiClient(options: DataApiClientOptions): RDSDataClient {
  const budget = options.resumeBudgetMs ?? 20_000;
  const client = new RDSDataClient({
    ...(options.region ? { region: options.region } : {}),
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
  });
  // Retry the whole call (re-serialized) with exponential backoff while the cluster resumes. A call that fails
  // this way has not run, so retrying it is safe even inside a transaction.
  client.middlewareStack.add(
    (next) => async (args) => {
      const started = Date.now();
      for (let delay = 250; ; delay = Math.min(delay * 2, 4_000)) {
        try {
          return await next(args);
        } catch (err) {
          if (!isDatabaseResuming(err) || Date.now() - started + delay > budget) throw err;
          await sleep(delay);
        }
      }
    },
    { step: 'initialize', name: 'retryDatabaseResuming' },
  );
  return client;
}
