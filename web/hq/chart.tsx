import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { number, t } from './i18n.js';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** How the figures read in the table and the legend. */
  format?: (v: number) => string;
}

const COLORS = ['#b3261e', '#1b6e3a', '#1f5fa8', '#b26a00', '#6b3fa0', '#00796b', '#5d4037', '#c2185b'];

/**
 * A chart drawn by uPlot (a charting library made for time series, canvas, no dependencies), over categories
 * (`labels`: hours, days, venues); bars or lines. The same figures are in a table under it for screen readers and
 * for anyone who wants the numbers.
 */
export function Chart(props: {
  title: string;
  labels: string[];
  series: ChartSeries[];
  kind?: 'bars' | 'line';
  height?: number;
  testid?: string;
  /** The figures are counts: the axis steps by whole numbers (no 0.25 orders). */
  counts?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  const { labels, series } = props;
  useEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    // Bars side by side for one or two series (uPlot aligns a bar left or right of its x); more series are lines,
    // which stay readable where bars would overlap.
    const bars = props.kind !== 'line' && series.length <= 2;
    const xs = labels.map((_, i) => i);
    // As many labels as fit the width without touching (a week by hour has 168 bars): every n-th one.
    const longest = Math.max(1, ...labels.map((l) => l.length));
    const fit = Math.max(1, Math.floor(Math.max(280, el.clientWidth) / (longest * 7 + 16)));
    const every = Math.max(1, Math.ceil(labels.length / fit));
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: props.height ?? 240,
      scales: {
        x: { time: false, range: [-0.5, Math.max(0.5, labels.length - 0.5)] },
        // Bars and counts start at zero, or 40 and 80 would look like 1 and 10.
        y: { range: (_u, min, max) => [Math.min(0, min), max > 0 ? max * 1.1 : 1] },
      },
      axes: [
        {
          values: (_u, ticks) => ticks.map((i) => (Math.round(i) % every === 0 ? (labels[Math.round(i)] ?? '') : '')),
          splits: () => xs,
          gap: 4,
        },
        // Figures as the page's language writes them (12 500, not 12,500).
        {
          size: 60,
          values: (_u, ticks) => ticks.map((v) => number(v, 2)),
          ...(props.counts ? { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000] } : {}),
        },
      ],
      legend: { show: series.length > 1 },
      cursor: { drag: { x: false, y: false } },
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: COLORS[i % COLORS.length],
          fill: bars ? `${COLORS[i % COLORS.length]}cc` : undefined,
          width: bars ? 0 : 2,
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : s.format ? s.format(v) : String(v)),
          paths: bars
            ? uPlot.paths.bars?.({
                size: [series.length === 1 ? 0.7 : 0.4, 60],
                align: series.length === 1 ? 0 : i === 0 ? -1 : 1,
              })
            : undefined,
          points: { show: !bars },
        })),
      ],
    };
    const data = [xs, ...series.map((s) => s.values)] as uPlot.AlignedData;
    const plot = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() =>
      plot.setSize({ width: Math.max(280, el.clientWidth), height: opts.height }),
    );
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [labels.join('\0'), JSON.stringify(series.map((s) => [s.label, s.values])), props.kind, props.counts]);

  return (
    <figure class="chart" data-testid={props.testid}>
      <figcaption>{props.title}</figcaption>
      <div ref={box} class="chart-canvas" role="img" aria-label={props.title} />
      <details class="chart-data">
        <summary>{t('app.chartTable')}</summary>
        <table class="data">
          <thead>
            <tr>
              <th scope="col">{props.title}</th>
              {series.map((s) => (
                <th key={s.label} scope="col" class="num">
                  {s.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {labels.map((label, i) => (
              <tr key={label}>
                <th scope="row">{label}</th>
                {series.map((s) => {
                  const v = s.values[i];
                  return (
                    <td key={s.label} class="num">
                      {v === null || v === undefined ? '–' : s.format ? s.format(v) : v}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
