// What the daemon reads on a real machine: the scan of the AI clients' configs (agent/discovery), whose server names
// it also keeps for the hook (which splits `mcp__<server>__<tool>` by them), and the spool the hooks append to
// (agent/spool). It keeps each server's source identity for the hook too, for the policy's source rules, and reports
// the tool hashes the MCP proxy saw for the servers it wraps.
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
    { proxiedToolSources },
  ] = await Promise.all([
    import('../version.ts'),
    import('../spool/spool.ts'),
    import('../discovery/scan.ts'),
    import('../discovery/fingerprint.ts'),
    import('../hooks/known-servers.ts'),
    import('../proxy/tool-hashes.ts'),
  ]);
  const key = loadFingerprintKey(stateDir);
  return {
    version: AGENT_VERSION,
    spool: openSpool(stateDir),
    inventory: {
      async scan() {
        const scan = await scanMachine(machine);
        saveScannedServers(stateDir, scan);
        // The proxies' tool hash files are watched too: a changed tools/list is reported as a config change is.
        const tools = proxiedToolSources(stateDir, scan);
        return {
          body: inventoryReport(scan, key, tools.read),
          watchedPaths: [...scan.watchedPaths, ...tools.paths],
        };
      },
    },
  };
}
