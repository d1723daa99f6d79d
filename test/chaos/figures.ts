/** The fault suite's table: one row per scenario, printed once at the end (and kept for the issue notes). */
export interface Row {
  scenario: string;
  /** What our proxy client reported: "complete N items" or "error CODE after N items". */
  clientSaw: string;
  /** A complete answer with fewer items than the baseline; must never happen. */
  shortSuccess: boolean;
  /** From the fault to the run lock and the processing flag being free. */
  released: string;
  nextRun: string;
  redisMb: string;
  rssMb: string;
}

const COLUMNS: Array<[keyof Row, string]> = [
  ['scenario', 'scenario'],
  ['clientSaw', 'client saw'],
  ['shortSuccess', 'short success'],
  ['released', 'lock + flag free after'],
  ['nextRun', 'next run'],
  ['redisMb', 'Redis MB before/after'],
  ['rssMb', 'max RSS MB before/after'],
];

export function table(rows: readonly Row[]): string {
  const cells = rows.map((r) => COLUMNS.map(([k]) => String(r[k])));
  const head = COLUMNS.map(([, h]) => h);
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...cells.map((c) => `| ${c.join(' | ')} |`),
  ].join('\n');
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
