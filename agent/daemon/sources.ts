// What the daemon reads on a real machine: the scan of the AI clients' configs (agent/discovery), whose server names
// it also keeps for the hook (which splits `mcp__<server>__<tool>` by them), and the spool the hooks append to
// (agent/spool). It keeps each server's source identity for the hook too, for the policy's source rules.
import type { ScanOptions } from '../discovery/scan.ts';
import type { EventSpool, InventorySource } from './daemon.ts';

export async function machineSources(
  stateDir: string,
  machine: Omit<ScanOptions, 'clients'>,
): Promise<{ version: string; inventory: InventorySource; spool: EventSpool }> {
  const [
    { AGENT_VERSION },
    { openSpool },
    { inventoryReport, scanMachine },
    { loadFingerprintKey },
    { saveScannedServers },
  ] = await Promise.all([
    import('../version.ts'),
    import('../spool/spool.ts'),
    import('../discovery/scan.ts'),
    import('../discovery/fingerprint.ts'),
    import('../hooks/known-servers.ts'),
  ]);
  const key = loadFingerprintKey(stateDir);
  return {
    version: AGENT_VERSION,
    spool: openSpool(stateDir) as unknown as EventSpool,
    inventory: {
      async scan() {
        const scan = await scanMachine(machine);
        saveScannedServers(stateDir, scan);
        return { body: inventoryReport(scan, key), watchedPaths: scan.watchedPaths };
      },
    },
  };
}
