// Scheduled (alerts.interval; EventBridge in the stack, a timer locally): derives alerts from the inventory reported
// since the last pass and from the denied-call spike, then delivers the webhooks that are due.
import { deriveInventoryAlerts, deriveSpike } from '#shared/domain/alert-derive.ts';
import { deliverWebhooks } from '#shared/domain/alert-webhooks.ts';
import { type InvocationFacts, invocationLogger } from '#shared/logger.ts';
import { getRuntime } from '#shared/runtime.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const { db } = runtime.database;
  const inventory = await deriveInventoryAlerts(db, runtime.config);
  const spike = await deriveSpike(db, runtime.config);
  const webhooks = await deliverWebhooks(db, runtime.config);
  const result = { ...inventory, spike, webhooks };
  if (inventory.hits || spike || webhooks.delivered || webhooks.retried || webhooks.dead)
    log.info('alerts derived', result);
  return result;
};
