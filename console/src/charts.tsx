// The Summary page's charts, drawn by uPlot on a canvas: calls over time stacked by result, the duration percentiles
// over time (one line each for p99, p95 and p50 of every bucket), and the duration percentiles of the top tools.
// uPlot's cursor and legend give each bucket's (or tool's) numbers on hover. Its
// stylesheet is bundled into console.css (no inline style: the CSP allows none).
import type { ComponentChildren } from 'preact';
import { useEffect, useMemo, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { components } from '../../client/api.ts';
import { formatNumber, formatTime } from './load.tsx';

type Summary = components['schemas']['ObservabilitySummary'];
type TopTool = components['schemas']['SummaryTopTool'];

const COLOR = {
  allowed: '#2da44e',
  denied: '#d97706',
  error: '#cf222e',
  p50: '#0969da',
  p95: '#8250df',
  p99: '#bf3989',
} as const;
const HEIGHT = 220;

/** A uPlot chart as wide as its container, rebuilt when its options or data change, above its caption. */
function Chart({
  id,
  options,
  data,
  children,
}: {
  id: string;
  options: Omit<uPlot.Options, 'width'>;
  data: uPlot.AlignedData;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const plot = new uPlot({ ...options, width: el.clientWidth || 900 }, data, el);
    const resized = new ResizeObserver(() => plot.setSize({ width: el.clientWidth, height: options.height }));
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [options, data]);
  return (
    <figure class="chart" id={id}>
      <div ref={ref} class="plot" />
      <figcaption>{children}</figcaption>
    </figure>
  );
}

const bars = () => uPlot.paths.bars?.({ size: [0.9, 48] });

/** A series drawn as bars in its colour; `value` is what the legend shows for the bar under the cursor. */
function barLayer(label: keyof typeof COLOR, value: uPlot.Series['value']): uPlot.Series {
  return { label, stroke: COLOR[label], fill: COLOR[label], paths: bars(), points: { show: false }, value };
}

const count = (v: number | null | undefined) => (v === null || v === undefined ? '—' : formatNumber(v));
const axisNumbers: uPlot.Axis = { values: (_u, splits) => splits.map((v) => formatNumber(v)), size: 60 };

/**
 * Stacked bars: each series is drawn as the running total up to it, largest first, so each covers the one below;
 * the legend shows each result's own count at the cursor.
 */
export function CallsChart({ s }: { s: Summary }) {
  const { options, data } = useMemo(() => {
    const allowed = s.series.map((b) => b.calls - b.denied - b.errors);
    const own = { error: s.series.map((b) => b.errors), denied: s.series.map((b) => b.denied), allowed };
    const layer = (label: keyof typeof own) =>
      barLayer(label, (_u, _v, _i, idx) => (idx === null ? '—' : count(own[label][idx])));
    const { bucket, ...time } = timeOptions(s);
    const options: Omit<uPlot.Options, 'width'> = {
      ...time,
      height: HEIGHT,
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{}, axisNumbers],
      series: [bucket, layer('error'), layer('denied'), layer('allowed')],
    };
    const data: uPlot.AlignedData = [
      s.series.map((b) => Date.parse(b.bucket) / 1000),
      s.series.map((b) => b.calls),
      s.series.map((b) => b.calls - b.errors),
      allowed,
    ];
    return { options, data };
  }, [s]);
  return (
    <Chart id="calls-chart" options={options} data={data}>
      Calls per {s.range.bucket}, stacked by result, {formatTime(s.range.from)} to {formatTime(s.range.to)}.
      Hover a bar for its numbers.
    </Chart>
  );
}

const msValue = (v: number | null | undefined) =>
  v === null || v === undefined ? '—' : `${formatNumber(v)} ms`;
const msAxis: uPlot.Axis = {
  ...axisNumbers,
  values: (_u, splits) => splits.map((v) => `${formatNumber(v)} ms`),
  size: 80,
};
/** The time axis and the legend's first entry of a series chart: the bucket under the cursor, in UTC. */
const timeOptions = (s: Summary) => ({
  tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
  cursor: { drag: { x: false, y: false } },
  bucket: {
    label: `${s.range.bucket} (UTC)`,
    // No bucket under the cursor: uPlot passes null.
    value: (_u: uPlot, v: number | null) => (v === null ? '—' : formatTime(new Date(v * 1000).toISOString())),
  } satisfies uPlot.Series,
});

/** Whether any bucket of the series has duration percentiles (a bucket without calls has none). */
export const hasDurations = (s: Summary) => s.series.some((b) => b.duration_p50_ms !== null);

/**
 * p99, p95 and p50 of each bucket as three lines over time, with a point per bucket (a bucket between two empty ones
 * is a point, not a line); empty buckets are gaps. The legend gives the three at the cursor.
 */
export function DurationSeriesChart({ s }: { s: Summary }) {
  const { options, data } = useMemo(() => {
    const { bucket, ...time } = timeOptions(s);
    const line = (label: 'p50' | 'p95' | 'p99'): uPlot.Series => ({
      label,
      stroke: COLOR[label],
      width: 2,
      points: { show: true, size: 5, fill: COLOR[label] },
      value: (_u, v: number | null) => msValue(v),
    });
    const options: Omit<uPlot.Options, 'width'> = {
      ...time,
      height: HEIGHT,
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      axes: [{}, msAxis],
      series: [bucket, line('p99'), line('p95'), line('p50')],
    };
    const data: uPlot.AlignedData = [
      s.series.map((b) => Date.parse(b.bucket) / 1000),
      s.series.map((b) => b.duration_p99_ms),
      s.series.map((b) => b.duration_p95_ms),
      s.series.map((b) => b.duration_p50_ms),
    ];
    return { options, data };
  }, [s]);
  return (
    <Chart id="duration-series-chart" options={options} data={data}>
      Duration percentiles per {s.range.bucket} (p99, p95, p50), {formatTime(s.range.from)} to{' '}
      {formatTime(s.range.to)}; a bucket without calls is a gap. Hover a point for its numbers.
    </Chart>
  );
}

/** p99, p95 and p50 of each top tool as nested bars (p50 ≤ p95 ≤ p99), the legend giving the three at the cursor. */
export function DurationsChart({ tools }: { tools: TopTool[] }) {
  const { options, data } = useMemo(() => {
    const name = (i: number) => {
      const t = tools[i];
      return t ? `${t.mcp_name} · ${t.tool}` : '';
    };
    const short = (text: string) => (text.length > 18 ? `${text.slice(0, 17)}…` : text);
    const layer = (label: 'p50' | 'p95' | 'p99') => barLayer(label, (_u, v: number | null) => msValue(v));
    const x = tools.map((_t, i) => i);
    const options: Omit<uPlot.Options, 'width'> = {
      height: HEIGHT,
      // Room on the right for the last tool's slanted name.
      padding: [8, 48, 0, 0],
      cursor: { drag: { x: false, y: false } },
      scales: {
        x: { time: false, range: () => [-0.5, Math.max(0.5, tools.length - 0.5)] },
        y: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      },
      axes: [
        { splits: () => x, values: (_u, splits) => splits.map((i) => short(name(i))), rotate: -20, size: 70 },
        msAxis,
      ],
      series: [
        { label: 'tool', value: (_u, v: number | null) => (v === null ? '—' : name(v)) },
        layer('p99'),
        layer('p95'),
        layer('p50'),
      ],
    };
    const data: uPlot.AlignedData = [
      x,
      tools.map((t) => t.duration_p99_ms),
      tools.map((t) => t.duration_p95_ms),
      tools.map((t) => t.duration_p50_ms),
    ];
    return { options, data };
  }, [tools]);
  return (
    <Chart id="durations-chart" options={options} data={data}>
      Duration percentiles of the top tools (p99, p95, p50); hover a bar for its numbers.
    </Chart>
  );
}
