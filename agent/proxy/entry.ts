// The proxy's own entry file when the agent runs from its sources: `<node> agent/proxy/entry.ts mcp-proxy …`.
import { runProxyProcess } from './main.ts';

runProxyProcess(process.argv.slice(2));
