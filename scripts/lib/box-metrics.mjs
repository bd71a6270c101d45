// The box's own histograms from /metrics (src/modules/health/metrics.ts), before and after a phase: what the box
// spent its time on, measured by itself, whatever the load client's core was doing.

/** Every histogram series of the box's /metrics: `name{labels}` -> {le -> count, sum, count}. */
export async function histograms(base, accessToken) {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${accessToken}` } });
  const text = await res.text();
  const out = new Map();
  for (const line of text.split('\n')) {
    const m = /^(\w+)_(bucket|sum|count)(\{[^}]*\})? ([\d.e+-]+|\+Inf)$/.exec(line);
    if (!m) continue;
    const [, name, part, labelText = '', value] = m;
    const le = /le="([^"]+)"/.exec(labelText)?.[1];
    const labels = labelText
      .replace(/le="[^"]+"/, '')
      .replace('{,', '{')
      .replace(',}', '}')
      .replace(',,', ',')
      .replace('{}', '');
    const key = `${name}${labels}`;
    const h = out.get(key) ?? { buckets: new Map(), sum: 0, count: 0 };
    if (part === 'bucket') h.buckets.set(le, Number(value));
    else h[part] = Number(value);
    out.set(key, h);
  }
  return out;
}

/** Per series, what happened between two snapshots: count, mean and the bucket that holds the 99th percentile. */
export function between(before, after, names) {
  const rows = {};
  for (const [key, h] of after) {
    if (!names.some((n) => key.startsWith(n))) continue;
    const b = before.get(key) ?? { buckets: new Map(), sum: 0, count: 0 };
    const count = h.count - b.count;
    if (count <= 0) continue;
    let le = '+Inf';
    for (const [bound, c] of h.buckets) {
      if (c - (b.buckets.get(bound) ?? 0) >= 0.99 * count) {
        le = bound;
        break;
      }
    }
    rows[key.replace('venue_box_', '')] = {
      n: count,
      meanMs: +((1000 * (h.sum - b.sum)) / count).toFixed(2),
      p99UnderMs: le === '+Inf' ? le : +(1000 * Number(le)).toFixed(1),
    };
  }
  return rows;
}
