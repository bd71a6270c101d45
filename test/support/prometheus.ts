// @ts-expect-error: the parser ships no types; its output is typed below.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Sample {
  value?: string;
  labels?: Record<string, string>;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}

export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Sample[];
}

/** A scrape parsed by a third-party parser (parse-prometheus-text-format), by family name. */
export function parseMetrics(text: string): Map<string, Family> {
  const families = parsePrometheusTextFormat(text) as Family[];
  return new Map(families.map((f) => [f.name, f]));
}

/** The value of the family's sample whose labels include `labels` (undefined when there is none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const sample = families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

/**
 * One series' value read from the text itself, e.g. `venue_box_queue_commit_duration_seconds_count{phase="confirm"}`.
 * The parser above folds a histogram with labels into one sample (all label sets' buckets together, their sums and
 * counts dropped: it follows client_python 0.0.19's parser), so those are read this way.
 */
export function seriesValue(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
