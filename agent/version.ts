// The agent's own version, reported with every inventory so that the admin sees out-of-date agents. The build
// bundles package.json's version in (a JSON import is inlined by the bundler), so the single file carries it.
import pkg from '../package.json' with { type: 'json' };

export const AGENT_VERSION: string = pkg.version;
