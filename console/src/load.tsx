// One way for every page to load data: a loading state, an error in words, an empty state in words.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { sessionEnded } from './session.ts';

export type Loaded<T> =
  | { state: 'loading' }
  | { state: 'error'; message: string; retry?: () => void }
  | { state: 'ready'; data: T };

/** What the console says when the service does not answer, or answers that it cannot serve now. */
export const NOT_ANSWERING = 'The service is not answering. Check that it is running, then retry.';

/** The `{error, message}` body of a refusal, or a generic sentence. */
export function describeError(error: unknown, status: number): string {
  if (error && typeof error === 'object' && 'message' in error && typeof error.message === 'string') {
    return error.message;
  }
  return `The service answered HTTP ${status}.`;
}

export interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Runs `fetcher` whenever `key` changes; the latest call wins. When the service does not answer (or answers 502, 503
 * or 504), the error carries a retry that runs it again with the same key: the page keeps its filters and place.
 */
export function useLoad<T>(key: string, fetcher: () => Promise<ApiResult<T>>): Loaded<T> {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: 'loading' });
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    let live = true;
    const retry = () => setAttempt((n) => n + 1);
    setLoaded({ state: 'loading' });
    fetcher().then(
      ({ data, error, response }) => {
        if (!live) return;
        if (response.status === 401) sessionEnded();
        else if (data !== undefined) setLoaded({ state: 'ready', data });
        else if ([502, 503, 504].includes(response.status)) {
          setLoaded({ state: 'error', message: `${NOT_ANSWERING} (HTTP ${response.status})`, retry });
        } else setLoaded({ state: 'error', message: describeError(error, response.status) });
      },
      () => {
        if (live) setLoaded({ state: 'error', message: NOT_ANSWERING, retry });
      },
    );
    return () => {
      live = false;
    };
  }, [key, attempt]);
  return loaded;
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="state loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Failed({ what, message, retry }: { what: string; message: string; retry?: () => void }) {
  return (
    <p class="state error" role="alert">
      Could not load {what}: {message}
      {retry && (
        <>
          {' '}
          <button type="button" class="retry" onClick={retry}>
            Retry
          </button>
        </>
      )}
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <p class="state empty">{children}</p>;
}

/** Renders the loading and error states, and `children(data)` once loaded. */
export function Show<T>({
  loaded,
  what,
  children,
}: {
  loaded: Loaded<T>;
  what: string;
  children: (data: T) => ComponentChildren;
}) {
  if (loaded.state === 'loading') return <Loading what={what} />;
  if (loaded.state === 'error') return <Failed what={what} message={loaded.message} retry={loaded.retry} />;
  return <>{children(loaded.data)}</>;
}

const dateTime = new Intl.DateTimeFormat('en-GB', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'UTC',
});
const number = new Intl.NumberFormat('en-US');

export const formatTime = (iso: string | null) => (iso ? `${dateTime.format(new Date(iso))} UTC` : '—');

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** "3 days ago", "5 minutes ago", "just now": the largest whole unit. */
export function formatRelative(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso) - now;
  for (const [unit, size] of UNITS) {
    if (Math.abs(ms) >= size) return relative.format(Math.trunc(ms / size), unit);
  }
  return 'just now';
}

/** A time as "3 days ago", with the exact time on hover (and for screen readers, in datetime). */
export function RelativeTime({ iso }: { iso: string | null }) {
  if (!iso) return <>—</>;
  return (
    <time dateTime={iso} title={formatTime(iso)}>
      {formatRelative(iso)}
    </time>
  );
}
export const formatNumber = (n: number) => number.format(n);
export const formatPercent = (rate: number) => `${(rate * 100).toFixed(1)} %`;

/** Whether an ISO time is within the last 7 days (the fleet highlights what is new). */
export const isNew = (iso: string | null) => !!iso && Date.now() - Date.parse(iso) < 7 * 24 * 3_600_000;

/**
 * A short tag after a name ("new", "never called"). The space before it is text, so that a screen reader reads
 * "claude-code new" rather than "claude-codenew"; `kind` names it for tests.
 */
export function Badge({
  kind,
  quiet,
  children,
}: {
  kind: string;
  quiet?: boolean;
  children: ComponentChildren;
}) {
  return (
    <>
      {' '}
      <span class={quiet ? 'badge quiet' : 'badge'} data-badge={kind}>
        {children}
      </span>
    </>
  );
}

/** Previous and next buttons of an offset-paged list: `shown` rows from `offset`, `page` per page, of `total`. */
export function OffsetPager({
  offset,
  page,
  shown,
  total,
  go,
}: {
  offset: number;
  page: number;
  shown: number;
  total: number;
  go: (next: { offset: string }) => void;
}) {
  return (
    <nav class="pager" aria-label="Pages">
      {offset > 0 && (
        <button type="button" onClick={() => go({ offset: String(Math.max(0, offset - page)) })}>
          Previous page
        </button>
      )}
      {offset + shown < total && (
        <button type="button" onClick={() => go({ offset: String(offset + page) })}>
          Next page
        </button>
      )}
    </nav>
  );
}

/**
 * A filter's select: "any", then the choices once loaded (a value, and its label when it says more). A value in
 * the URL that is not among them stays selectable, marked "(none)", so the page never shows another filter than
 * the one applied.
 */
export function ChoiceSelect({
  id,
  name,
  value,
  choices,
}: {
  id: string;
  name: string;
  value: string | undefined;
  choices: { value: string; label?: string }[] | undefined;
}) {
  const labels = new Map((choices ?? []).map((c) => [c.value, c.label ?? c.value]));
  const values = [...labels.keys()];
  if (value && choices && !labels.has(value)) values.push(value);
  return (
    <select id={id} name={name} value={value ?? ''} key={`${value ?? ''}:${choices ? 'ready' : 'loading'}`}>
      <AnyOptions values={values} label={(v) => labels.get(v) ?? `${v} (none)`} />
    </select>
  );
}

/** Whether the screen is wide enough for filters beside the content (the CSS's breakpoint, 48rem). */
const wideScreen = () => matchMedia('(min-width: 48rem)').matches;

/** A page's filters: open on a wide screen, folded behind "Filters" on a phone (a native, keyboard-ready disclosure). */
export function FilterFold({ children }: { children: ComponentChildren }) {
  return (
    <details class="fold" open={wideScreen()}>
      <summary>Filters</summary>
      {children}
    </details>
  );
}

/**
 * A table that scrolls sideways inside its box on a narrow screen. The box takes focus so that a keyboard can
 * scroll it too (axe's scrollable-region-focusable, WCAG 2.1.1).
 */
export function TableScroll({ children }: { children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <div class="table-scroll" tabIndex={0}>
      {children}
    </div>
  );
}

/** The options of a filter's select: "any" (no filter), then each value, shown as `label` gives it. */
export function AnyOptions({
  values,
  label = (v) => v,
}: {
  values: readonly string[];
  label?: (value: string) => string;
}) {
  return (
    <>
      <option value="">any</option>
      {values.map((v) => (
        <option key={v} value={v}>
          {label(v)}
        </option>
      ))}
    </>
  );
}

/** A table's header row: one column heading per name. */
export function ColumnHeads({ names }: { names: readonly string[] }) {
  return (
    <thead>
      <tr>
        {names.map((name) => (
          <th key={name} scope="col">
            {name}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A filter of a filters form: a labelled select of "any" and `values` (give it a key that changes with `value`). */
export function FilterSelect({
  name,
  label,
  value,
  values,
  show,
}: {
  name: string;
  label: string;
  value: string | undefined;
  values: readonly string[];
  show?: (value: string) => string;
}) {
  return (
    <label>
      {label}
      <select name={name} value={value ?? ''}>
        <AnyOptions values={values} {...(show ? { label: show } : {})} />
      </select>
    </label>
  );
}
