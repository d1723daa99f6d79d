/**
 * Metric names used by a PromQL expression. A small scanner, not a parser: it removes what can
 * hold identifiers that are not metrics (strings, label matchers, grouping clauses, ranges,
 * Grafana variables), then keeps identifiers that are neither functions nor keywords.
 */
const KEYWORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'inf',
  'nan',
]);

export function metricNames(expr: string): string[] {
  let e = expr;
  // Grafana: label_values(metric{...}, label) -> metric{...}
  e = e.replace(/label_values\(\s*([^,()]+?)\s*,\s*[A-Za-z_]\w*\s*\)/g, '$1');
  e = e.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""');
  e = e.replace(/\{[^}]*\}/g, ' ');
  e = e.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  e = e.replace(/\[[^\]]*\]/g, ' ');
  e = e.replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  const re = /[A-Za-z_:][\w:]*/g;
  for (let m = re.exec(e); m; m = re.exec(e)) {
    const word = m[0];
    const prev = e[m.index - 1];
    if (prev !== undefined && /[\d.]/.test(prev)) continue; // 1e-9, 0.5m
    if (KEYWORDS.has(word.toLowerCase())) continue;
    if (/^\s*\(/.test(e.slice(m.index + word.length))) continue; // function call
    names.add(word);
  }
  return [...names];
}

/** A histogram's series name maps to its base metric. */
export function baseMetric(name: string, known: ReadonlySet<string>): string {
  if (known.has(name)) return name;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m && known.has(m[1]!) ? m[1]! : name;
}
