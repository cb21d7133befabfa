// Durations in config are Go-style strings ("15m", "30m", "1h30m", "500ms"), as the spec's reference values are.
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;

/** Parses "15m", "1h30m", "500ms" into milliseconds; returns undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  if (text.length === 0) return undefined;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const start = PART.lastIndex;
    const match = PART.exec(text);
    if (!match || match.index !== start) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  }
  return total;
}
