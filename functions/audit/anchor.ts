// Scheduled (every audit.anchors.interval: EventBridge in the stack, a timer in the local server; only when
// audit.anchors.target is not "none"): signs the audit chain's head and writes it as an anchor outside the database
// (shared/audit/anchors.ts). Throws when the chain is broken or the store or key fails, so that the target retries.
import { anchorAuditChain, anchorSigner, openAnchorStore } from '#shared/audit/anchors.ts';
import { type InvocationFacts, invocationLogger } from '#shared/core/logger.ts';
import { getRuntime } from '#shared/core/runtime.ts';

export const handler = async (_event?: unknown, lambda?: InvocationFacts) => {
  const log = invocationLogger(lambda);
  const { config, database } = await getRuntime();
  const store = await openAnchorStore(config.audit.anchors);
  if (!store) return { target: 'none', anchored: null };
  const run = await anchorAuditChain(
    database.db,
    store,
    config.audit.anchors.prefix,
    await anchorSigner(config),
  );
  if (run.anchored) {
    log.info('audit chain anchored', {
      location: store.location,
      key: run.key,
      seq: run.anchored.seq,
      count: run.anchored.count,
      key_id: run.anchored.key_id,
    });
  }
  return { target: config.audit.anchors.target, ...run };
};
