// `agent hooks install | uninstall [--managed] [--client <id>]… [--root <dir>]`: what was done, one line per client.
import { type HookOutcome, type HooksOptions, installHooks, uninstallHooks } from './install.ts';

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
export function runHooksCommand(
  action: string | undefined,
  options: HooksOptions,
  out: (line: string) => void,
  err: (line: string) => void = out,
): number {
  if (action !== 'install' && action !== 'uninstall') {
    err(`error: hooks needs install or uninstall, not ${JSON.stringify(action ?? '')}`);
    err('usage: hooks install|uninstall [--managed] [--client <id>]… [--root <dir>]');
    return 2;
  }
  const outcomes = action === 'install' ? installHooks(options) : uninstallHooks(options);
  for (const outcome of outcomes) out(formatOutcome(outcome));
  return outcomes.some((outcome) => outcome.status === 'failed') ? 1 : 0;
}
