// `agent hooks install | uninstall [--managed] [--client <id>]… [--root <dir>] [--proxy <server>]…`: what was done,
// one line per client (and per config file whose servers the proxy wraps). Uninstall also unwraps the servers the
// proxy wraps: all of them, or those named by --proxy.
import { HOOK_CLIENTS } from './clients/index.ts';
import { currentEnv, type HookOutcome, type HooksOptions, installHooks, uninstallHooks } from './install.ts';

const LABELS: Record<HookOutcome['status'], string> = {
  installed: 'installed',
  unchanged: 'unchanged',
  restored: 'restored',
  removed: 'removed',
  'not-found': 'not set up',
  skipped: 'skipped',
  failed: 'FAILED',
};

export function formatOutcome(outcome: HookOutcome): string {
  const parts = [outcome.client.padEnd(12), LABELS[outcome.status].padEnd(11), outcome.file ?? ''];
  if (outcome.backup) parts.push(`(backup: ${outcome.backup})`);
  if (outcome.message) parts.push(`— ${outcome.message}`);
  return parts.join(' ').trimEnd();
}

/** Runs the command and prints its outcome; the exit code is 1 when a client failed. */
export async function runHooksCommand(
  action: string | undefined,
  options: HooksOptions & { proxy?: readonly string[] },
  out: (line: string) => void,
  err: (line: string) => void = out,
): Promise<number> {
  if (action !== 'install' && action !== 'uninstall') {
    err(`error: hooks needs install or uninstall, not ${JSON.stringify(action ?? '')}`);
    err('usage: hooks install|uninstall [--managed] [--client <id>]… [--root <dir>] [--proxy <server>]…');
    return 2;
  }
  const { proxy = [], ...hookOptions } = options;
  const outcomes: HookOutcome[] = [];
  // Where proxies are (un)wrapped, --client may name clients without hooks: those only get the proxy part.
  const withProxies = !options.managed && (proxy.length > 0 || action === 'uninstall');
  const hookIds = options.clients?.filter((id) => !withProxies || HOOK_CLIENTS.some((c) => c.id === id));
  if (!options.clients?.length || hookIds?.length) {
    const hooks = { ...hookOptions, ...(hookIds ? { clients: hookIds } : {}) };
    outcomes.push(...(action === 'install' ? installHooks(hooks) : uninstallHooks(hooks)));
  }
  if (withProxies) {
    const { installProxies, uninstallProxies } = await import('../proxy/install.ts');
    const target = {
      stateDir: options.stateDir,
      servers: proxy,
      ...(options.clients ? { clients: options.clients } : {}),
    };
    outcomes.push(
      ...(action === 'install'
        ? await installProxies({
            ...target,
            env: options.env ?? currentEnv(),
            ...(options.hookEntry ? { entry: options.hookEntry } : {}),
            ...(options.node ? { node: options.node } : {}),
          })
        : uninstallProxies(target)),
    );
  }
  for (const outcome of outcomes) out(formatOutcome(outcome));
  return outcomes.some((outcome) => outcome.status === 'failed') ? 1 : 0;
}
