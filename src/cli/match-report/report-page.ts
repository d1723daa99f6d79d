/**
 * `fusion-proxy match --report FILE.html`: one self-contained page (no network: inline CSS and JS,
 * the data embedded as JSON) whose script draws the charts as SVG when the page loads. Each chart is an
 * <svg data-chart="..."> with .bar / .series / .point / .axis-label / .threshold elements, so a headless
 * browser test can check that it drew.
 */
import type { ReportData } from './report-data';

const CSS = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1000px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
svg { background: #fafafa; border: 1px solid #ddd; display: block; }
.bar { fill: #4a7bd0; } .bar.u { fill: #d08a4a; }
.series { fill: none; stroke-width: 2; } .series.forms, .series.precision { stroke: #4a7bd0; }
.series.recall { stroke: #3a9a5b; } .point { fill: #222; }
.threshold { stroke: #c0392b; stroke-width: 2; stroke-dasharray: 5 3; }
.axis { stroke: #888; } .axis-label, .tick { font-size: 11px; fill: #444; }
table { border-collapse: collapse; font-size: 13px; } td, th { border: 1px solid #ddd; padding: 2px 8px; text-align: right; }
td:first-child, th:first-child, td:nth-child(2) { text-align: left; }
.note { color: #666; font-size: 12px; }
`;

/** The drawing code, run by the browser: plain ES2017, no libraries. */
const SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var W = 900, H = 300, L = 60, R = 20, T = 20, B = 50;
  function el(parent, name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function chart(id, title) {
    var box = document.getElementById(id);
    var h = document.createElement('h2');
    h.textContent = title;
    box.appendChild(h);
    var svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', W); svg.setAttribute('height', H); svg.setAttribute('data-chart', id);
    box.appendChild(svg);
    return svg;
  }
  function scale(d0, d1, r0, r1) {
    return function (v) { return d1 === d0 ? (r0 + r1) / 2 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0); };
  }
  function axes(svg, xLabel, yLabel, x, y, xs, ys) {
    el(svg, 'line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B });
    el(svg, 'line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B });
    el(svg, 'text', { class: 'axis-label', x: (L + W - R) / 2, y: H - 10, 'text-anchor': 'middle' }, xLabel);
    el(svg, 'text', { class: 'axis-label', x: 14, y: (T + H - B) / 2, transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')', 'text-anchor': 'middle' }, yLabel);
    var last = -Infinity;
    xs.forEach(function (v) {
      if (x(v) - last < 34) return; // crowded ticks (0.99, 0.995, 0.999) would overprint each other
      last = x(v);
      el(svg, 'text', { class: 'tick', x: x(v), y: H - B + 15, 'text-anchor': 'middle' }, fmt(v));
    });
    ys.forEach(function (v) { el(svg, 'text', { class: 'tick', x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)); });
  }
  function fmt(v) { return Math.abs(v) >= 10 || v === Math.round(v) ? String(Math.round(v)) : String(Math.round(v * 1000) / 1000); }
  function thresholdLine(svg, xPos, value) {
    el(svg, 'line', { class: 'threshold', x1: xPos, y1: T, x2: xPos, y2: H - B, 'data-value': value });
    el(svg, 'text', { class: 'tick', x: xPos + 4, y: T + 10 }, 'threshold ' + value);
  }
  function ticks(lo, hi, n) { var out = []; for (var i = 0; i <= n; i++) out.push(lo + ((hi - lo) * i) / n); return out; }

  // 1. Histogram of match weights (scores), with the threshold.
  (function () {
    var svg = chart('weights', 'Pairs by ' + data.weightLabel);
    var bins = data.histogram;
    if (!bins.length) { el(svg, 'text', { class: 'axis-label', x: W / 2, y: H / 2 }, 'no pairs'); return; }
    var lo = bins[0].from, hi = bins[bins.length - 1].to;
    if (data.weightThreshold !== undefined && data.weightThreshold !== null) { lo = Math.min(lo, data.weightThreshold); hi = Math.max(hi, data.weightThreshold); }
    var max = Math.max.apply(null, bins.map(function (b) { return b.count; }));
    var x = scale(lo, hi === lo ? lo + 1 : hi, L, W - R), y = scale(0, max, H - B, T);
    axes(svg, data.weightLabel, 'pairs', x, y, ticks(lo, hi, 6), ticks(0, max, 4));
    bins.forEach(function (b) {
      var x0 = x(b.from), x1 = Math.max(x0 + 1, x(b.to) - 1);
      el(svg, 'rect', { class: 'bar', x: x0, y: y(b.count), width: x1 - x0, height: H - B - y(b.count), 'data-count': b.count });
    });
    if (data.threshold !== undefined && data.weightThreshold !== undefined && data.weightThreshold !== null) thresholdLine(svg, x(data.weightThreshold), data.threshold);
  })();

  function sweepChart(id, title, series, yLabel, yMax) {
    var svg = chart(id, title);
    var pts = data.sweep;
    var lo = pts[0].threshold, hi = pts[pts.length - 1].threshold;
    var x = scale(lo, hi, L, W - R), y = scale(0, yMax, H - B, T);
    axes(svg, data.sweepLabel, yLabel, x, y, pts.map(function (p) { return p.threshold; }), ticks(0, yMax, 4));
    series.forEach(function (s) {
      var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + x(p.threshold) + ' ' + y(p[s]); }).join(' ');
      el(svg, 'path', { class: 'series ' + s, d: d, 'data-series': s });
      pts.forEach(function (p) { el(svg, 'circle', { class: 'point', cx: x(p.threshold), cy: y(p[s]), r: 3, 'data-series': s }); });
      el(svg, 'text', { class: 'axis-label', x: x(hi) - 4, y: y(pts[pts.length - 1][s]) - 6, 'text-anchor': 'end' }, s);
    });
    if (data.threshold !== undefined) thresholdLine(svg, x(data.threshold), data.threshold);
  }
  // 2. Forms opened vs threshold; 3. precision and recall vs threshold (truth file given).
  if (data.sweep.length) {
    var maxForms = Math.max(1, Math.max.apply(null, data.sweep.map(function (p) { return p.forms; })));
    sweepChart('forms', 'Review forms opened by threshold', ['forms'], 'forms', maxForms);
    if (data.truthPairs !== undefined) sweepChart('quality', 'Precision and recall by threshold', ['precision', 'recall'], 'precision / recall', 1);
  }

  // 4. Estimated m and u per level (log scale), probabilistic model only.
  if (data.parameters) {
    var svg = chart('parameters', 'Estimated m and u per comparison level (log scale)');
    var levels = [];
    data.parameters.attributes.forEach(function (a) { a.levels.forEach(function (l) { levels.push({ name: a.attribute + ': ' + l.level, m: l.m, u: l.u }); }); });
    var lg = function (v) { return Math.log10(Math.max(v, 1e-6)); };
    var x = scale(0, levels.length, L, W - R), y = scale(-6, 0, H - B, T);
    axes(svg, '', 'probability (log10)', x, y, [], [-6, -4, -2, 0]);
    svg.setAttribute('height', H + 130); // room for the slanted level names
    var legend = document.createElement('p');
    legend.className = 'note';
    legend.textContent = 'blue: m = P(level | same person); orange: u = P(level | different people)';
    svg.parentNode.insertBefore(legend, svg);
    var bw = (W - R - L) / Math.max(1, levels.length) / 2 - 2;
    levels.forEach(function (l, i) {
      el(svg, 'rect', { class: 'bar m', x: x(i) + 1, y: y(lg(l.m)), width: bw, height: H - B - y(lg(l.m)), 'data-level': l.name });
      el(svg, 'rect', { class: 'bar u', x: x(i) + 1 + bw, y: y(lg(l.u)), width: bw, height: H - B - y(lg(l.u)), 'data-level': l.name });
      var lx = x(i) + bw, ly = H - B + 12;
      el(svg, 'text', { class: 'tick', x: lx, y: ly, 'text-anchor': 'end', transform: 'rotate(-35 ' + lx + ' ' + ly + ')' }, l.name);
    });
  }
  document.body.setAttribute('data-drawn', String(document.querySelectorAll('svg[data-chart]').length));
})();
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
  if (!data.parameters) return '';
  const rows = data.parameters.attributes.flatMap((a) =>
    a.levels.map((l) => {
      const w = l.m > 0 && l.u > 0 ? (Math.log2(l.m / l.u) >= 0 ? '+' : '') + Math.log2(l.m / l.u).toFixed(2) : '';
      return `<tr><td>${escapeHtml(a.attribute)}</td><td>${escapeHtml(l.level)}</td><td>${l.m.toPrecision(3)}</td><td>${l.u.toPrecision(3)}</td><td>${w}</td></tr>`;
    }),
  );
  const p = data.parameters;
  return `<p>Estimated ${escapeHtml(p.estimatedAt)} from ${p.records} records; prior (share of true matches) ${p.prior.toPrecision(3)}.</p>
<table><tr><th>attribute</th><th>level</th><th>m</th><th>u</th><th>weight log2(m/u)</th></tr>${rows.join('')}</table>`;
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
<div id="weights"></div>
<div id="forms"></div>
<div id="quality"></div>
<div id="parameters"></div>
${parameterTable(data)}
<p class="note">Self-contained page: no network access; the data is embedded below as JSON.</p>
<script type="application/json" id="report-data">${embeddedJson(data)}</script>
<script>${SCRIPT}</script>
</body></html>
`;
}
