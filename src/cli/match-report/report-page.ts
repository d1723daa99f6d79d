/**
 * `fusion-proxy match --report FILE.html`: one self-contained page (no network: inline CSS and JS,
 * the data embedded as JSON) whose script draws the charts as SVG when the page loads. Each chart is an
 * <svg data-chart="..."> with .bar / .series / .point / .axis-label / .threshold elements, so a headless
 * browser test can check that it drew.
 */
import { MATCH_WEIGHT_WORDS, priorWords } from './level-words';
import type { ReportData, ReviewPair } from './report-data';
import { REPORT_SCRIPT } from './report-script';

const CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1000px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
svg { background: #fafafa; border: 1px solid #ddd; display: block; }
.bar { fill: #4a7bd0; } .bar.u { fill: #d08a4a; } .bar.true, .swatch.true { fill: #3a9a5b; } .bar.false, .swatch.false { fill: #d08a4a; }
.series { fill: none; stroke-width: 2; } .series.forms, .series.precision { stroke: #4a7bd0; }
.series.formPrecision { stroke: #8e44ad; } .series.recall { stroke: #3a9a5b; } .point { fill: #222; }
.warning { color: #8a4b00; } td.why { text-align: left; font-size: 12px; }
.threshold { stroke: #c0392b; stroke-width: 2; stroke-dasharray: 5 3; }
.axis { stroke: #888; } .axis-label, .tick { font-size: 11px; fill: #444; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
td:first-child, th:first-child, td:nth-child(2) { text-align: left; }
.note { color: #666; font-size: 12px; }
`;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);
}

/** JSON safe inside a <script> element: no "</script" or "<!--" can close or confuse it. */
function embeddedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

function parameterTable(data: ReportData): string {
  if (!data.parameters || !data.levels) return '';
  const rows = data.levels.map((l) => {
    const w = l.neutral ? '0 (counted by another attribute)' : `${l.weight >= 0 ? '+' : ''}${l.weight.toFixed(2)}`;
    return `<tr><td>${escapeHtml(l.attribute)}</td><td>${escapeHtml(l.level)}</td><td class="why">${escapeHtml(l.meaning)}</td><td>${l.m.toPrecision(3)}</td><td>${l.u.toPrecision(3)}</td><td>${w}</td></tr>`;
  });
  const p = data.parameters;
  return `<h2>What each comparison is worth</h2>
<p>Estimated ${escapeHtml(p.estimatedAt)} from ${p.records} records. m: how often a true duplicate shows the level; u: how often two different people do; the weight is what the level adds to a pair’s match weight.</p>
<table><tr><th>attribute</th><th>level</th><th>meaning</th><th>m</th><th>u</th><th>weight used</th></tr>${rows.join('')}</table>`;
}

function pairTable(title: string, note: string, pairs: readonly ReviewPair[] | undefined): string {
  if (!pairs) return '';
  if (pairs.length === 0) return `<h2>${escapeHtml(title)}</h2><p class="note">none</p>`;
  const rows = pairs.map(
    (p) =>
      `<tr><td>${escapeHtml(p.accountId)}</td><td>${escapeHtml(p.candidateId)}</td><td>${p.probability !== undefined ? p.probability.toFixed(3) : 'not a candidate'}</td><td class="why">${escapeHtml(p.why ?? '')}</td></tr>`,
  );
  return `<h2>${escapeHtml(title)}</h2><p class="note">${escapeHtml(note)}</p>
<table><tr><th>account</th><th>candidate</th><th>probability</th><th>why (level and weight per attribute)</th></tr>${rows.join('')}</table>`;
}

function guide(data: ReportData): string {
  const parts: string[] = [];
  if (data.parameters) {
    parts.push(`<p>${escapeHtml(MATCH_WEIGHT_WORDS)}</p>`);
    parts.push(`<p>${escapeHtml(priorWords(data.parameters.prior, data.parameters.records))}</p>`);
  }
  if (data.candidatesMean !== undefined) {
    parts.push(
      `<p>Candidates scored per account: ${data.candidatesMean} on average, ${data.candidatesMax ?? 0} at most.</p>`,
    );
  }
  if (data.warnings?.length) {
    parts.push(
      `<h2>Configuration warnings</h2><ul>${data.warnings.map((w) => `<li class="warning">${escapeHtml(w)}</li>`).join('')}</ul>`,
    );
  }
  return parts.join('\n');
}

export function renderReportPage(data: ReportData): string {
  const threshold =
    data.threshold !== undefined
      ? `probability threshold ${data.threshold}${data.floor !== undefined ? `; pairs below ${data.floor} not collected` : ''}`
      : 'per-attribute thresholds of the rules model';
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fusion-proxy match report</title>
<style>${CSS}</style></head>
<body>
<h1>fusion-proxy match: ${escapeHtml(data.model)} model</h1>
<p>${data.identities} identities, ${data.accounts} accounts; ${escapeHtml(threshold)}${data.truthPairs !== undefined ? `; truth file: ${data.truthPairs} pairs` : ''}.</p>
${guide(data)}
<div id="weights"></div>
<div id="forms"></div>
<div id="quality"></div>
${pairTable('Highest false pairs at the threshold', 'Pairs at or above the threshold that the truth file does not list: the forms a reviewer would reject.', data.falsePairs)}
${pairTable('True pairs the threshold misses', 'True pairs below the threshold, the closest first; "not a candidate": no attribute brought the pair (or it fell below the 0.01 floor).', data.missedPairs)}
<div id="parameters"></div>
${parameterTable(data)}
<p class="note">Self-contained page: no network access; the data is embedded below as JSON.</p>
<script type="application/json" id="report-data">${embeddedJson(data)}</script>
<script>${REPORT_SCRIPT}</script>
</body></html>
`;
}
