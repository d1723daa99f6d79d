/** One sample of the Prometheus text format: name, labels, value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text exposition format (what GET /metrics serves). */
export function parsePromText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[3] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    out.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return out;
}

/** Samples of one metric whose labels include `match`. */
export function samples(all: Sample[], name: string, match: Record<string, string> = {}): Sample[] {
  return all.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v));
}
