// Scheduled (alerts.interval; EventBridge in the stack, a timer locally): derives alerts from the inventory reported
// since the last pass and from the denied-call spike, then delivers the webhooks and EventBridge events that are due.
import { deriveInventoryAlerts, deriveSpike, deriveToolAlerts } from '#shared/alerts/derive.ts';
import { deliverAlerts } from '#shared/alerts/webhooks.ts';
import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const runtime = await getRuntime();
  const { db } = runtime.database;
  const inventory = await deriveInventoryAlerts(db, runtime.config);
  const tools = await deriveToolAlerts(db, runtime.config);
  const spike = await deriveSpike(db, runtime.config);
  const deliveries = await deliverAlerts(db, runtime.config);
  const result = { ...inventory, tools, spike, deliveries };
  if (inventory.hits || tools || spike || deliveries.delivered || deliveries.retried || deliveries.dead)
    log.info('alerts derived', result);
  return result;
};
