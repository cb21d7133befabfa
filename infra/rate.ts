// EventBridge rate expressions from the config's durations (milliseconds). EventBridge only takes whole minutes,
// hours or days, at least one minute, singular unit for a value of 1: `rate(1 hour)`, `rate(30 minutes)`.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export class RateError extends Error {
  override name = 'RateError';
}

/**
 * The largest unit that divides the interval exactly: 30m → rate(30 minutes), 1h → rate(1 hour),
 * 1h30m → rate(90 minutes), 1d → rate(1 day). Anything shorter than a minute or not a whole number of minutes is
 * refused (naming `what`), since EventBridge would silently run it at another interval.
 */
export function rateExpression(ms: number, what = 'interval'): string {
  if (!Number.isFinite(ms) || ms < MINUTE || ms % MINUTE !== 0) {
    throw new RateError(
      `${what}: EventBridge schedules need a whole number of minutes, at least 1m (got ${ms} ms)`,
    );
  }
  const [value, unit] =
    ms % DAY === 0 ? [ms / DAY, 'day'] : ms % HOUR === 0 ? [ms / HOUR, 'hour'] : [ms / MINUTE, 'minute'];
  return `rate(${value} ${value === 1 ? unit : `${unit}s`})`;
}
