// The hooks feature's public entry, for the rest of the agent (the scan, the daemon, the CLI). The hook command
// itself starts from entry.ts / main.ts and imports none of this.
export { captureSupport } from './capture-support.ts';
export { HOOK_CLIENTS, hookClient } from './clients/index.ts';
export { errorLogPath } from './error-log.ts';
export { type HookOutcome, type HooksOptions, installHooks, uninstallHooks } from './install.ts';
export { knownServers, saveKnownServers, saveScannedServers } from './known-servers.ts';
export { runHookProcess } from './main.ts';
export { type PolicyCache, readPolicyCache, savePolicyCache, saveServerSources } from './policy.ts';
export { type AgentSettings, readSettings, settingsPath } from './settings.ts';
