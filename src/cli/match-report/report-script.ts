/**
 * The drawing code of the tuning report, run by the browser: plain ES2017, no libraries. Each chart is
 * an <svg data-chart="..."> with .bar / .series / .point / .axis-label / .threshold elements. After
 * drawing, labels that would overlap are moved apart and a chart grows to hold every label; the body
 * then says what is left (data-overlaps, data-clipped: 0 when every label is readable), which the
 * Chromium test reads.
 */
export const REPORT_SCRIPT = String.raw`
(function () {
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var NS = 'http://www.w3.org/2000/svg';
  var W = 900, H = 300, L = 60, R = 110, T = 24, B = 50;
  function el(parent, name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, String(attrs[k]));
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function chart(id, title, note) {
    var box = document.getElementById(id);
    var h = document.createElement('h2');
    h.textContent = title;
    box.appendChild(h);
    if (note) { var p = document.createElement('p'); p.className = 'note'; p.textContent = note; box.appendChild(p); }
    var svg = document.createElementNS(NS, 'svg');
    svg.setAttribute('width', W); svg.setAttribute('height', H); svg.setAttribute('data-chart', id);
    box.appendChild(svg);
    return svg;
  }
  function scale(d0, d1, r0, r1) {
    return function (v) { return d1 === d0 ? (r0 + r1) / 2 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0); };
  }
  function fmt(v) { return Math.abs(v) >= 10 || v === Math.round(v) ? String(Math.round(v)) : String(Math.round(v * 1000) / 1000); }
  function axes(svg, xLabel, yLabel, x, y, xs, ys) {
    el(svg, 'line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B });
    el(svg, 'line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B });
    el(svg, 'text', { class: 'axis-label', x: (L + W - R) / 2, y: H - 8, 'text-anchor': 'middle' }, xLabel);
    el(svg, 'text', { class: 'axis-label', x: 14, y: (T + H - B) / 2, transform: 'rotate(-90 14 ' + (T + H - B) / 2 + ')', 'text-anchor': 'middle' }, yLabel);
    var last = -Infinity;
    xs.forEach(function (v) {
      if (x(v) - last < 40) return; // crowded ticks (0.99, 0.995, 0.999) would overprint each other
      last = x(v);
      el(svg, 'text', { class: 'tick', x: x(v), y: H - B + 19, 'text-anchor': 'middle' }, fmt(v));
    });
    ys.forEach(function (v) { el(svg, 'text', { class: 'tick', x: L - 6, y: y(v) + 4, 'text-anchor': 'end' }, fmt(v)); });
  }
  function thresholdLine(svg, xPos, value) {
    el(svg, 'line', { class: 'threshold', x1: xPos, y1: T, x2: xPos, y2: H - B, 'data-value': value });
    el(svg, 'text', { class: 'tick label threshold-label', x: xPos + 4, y: T - 8 }, 'threshold ' + value);
  }
  function ticks(lo, hi, n) { var out = []; for (var i = 0; i <= n; i++) out.push(lo + ((hi - lo) * i) / n); return out; }
  function legend(svg, items) {
    items.forEach(function (it, i) {
      el(svg, 'rect', { class: 'swatch ' + it[0], x: W - R + 10, y: T + i * 18, width: 12, height: 12 });
      el(svg, 'text', { class: 'tick label', x: W - R + 26, y: T + i * 18 + 10 }, it[1]);
    });
  }

  // 1. Histogram of match weights (scores), true and false pairs apart with a truth file, and the threshold.
  (function () {
    var split = data.histogram.length > 0 && data.histogram[0].trueCount !== undefined;
    var svg = chart('weights', 'Pairs by ' + data.weightLabel, split ? 'green: true pairs (in the truth file); orange: false pairs' : '');
    var bins = data.histogram;
    if (!bins.length) { el(svg, 'text', { class: 'axis-label', x: W / 2, y: H / 2 }, 'no pairs'); return; }
    var lo = bins[0].from, hi = bins[bins.length - 1].to;
    if (data.weightThreshold !== undefined && data.weightThreshold !== null) { lo = Math.min(lo, data.weightThreshold); hi = Math.max(hi, data.weightThreshold); }
    var max = Math.max.apply(null, bins.map(function (b) { return b.count; }));
    var x = scale(lo, hi === lo ? lo + 1 : hi, L, W - R), y = scale(0, max, H - B, T);
    axes(svg, data.weightLabel, 'pairs', x, y, ticks(lo, hi, 6), ticks(0, max, 4));
    bins.forEach(function (b) {
      var x0 = x(b.from), x1 = Math.max(x0 + 1, x(b.to) - 1);
      if (!split) {
        el(svg, 'rect', { class: 'bar', x: x0, y: y(b.count), width: x1 - x0, height: H - B - y(b.count), 'data-count': b.count });
        return;
      }
      el(svg, 'rect', { class: 'bar true', x: x0, y: y(b.trueCount), width: x1 - x0, height: H - B - y(b.trueCount), 'data-count': b.trueCount });
      el(svg, 'rect', { class: 'bar false', x: x0, y: y(b.trueCount + b.falseCount), width: x1 - x0, height: y(b.trueCount) - y(b.trueCount + b.falseCount), 'data-count': b.falseCount });
    });
    if (split) legend(svg, [['true', 'true pairs'], ['false', 'false pairs']]);
    if (data.threshold !== undefined && data.weightThreshold !== undefined && data.weightThreshold !== null) thresholdLine(svg, x(data.weightThreshold), data.threshold);
  })();

  function sweepChart(id, title, series, names, yLabel, yMax, note) {
    var svg = chart(id, title, note);
    var pts = data.sweep;
    var lo = pts[0].threshold, hi = pts[pts.length - 1].threshold;
    var x = scale(lo, hi, L, W - R), y = scale(0, yMax, H - B, T);
    axes(svg, data.sweepLabel, yLabel, x, y, pts.map(function (p) { return p.threshold; }), ticks(0, yMax, 4));
    series.forEach(function (s, k) {
      var d = pts.map(function (p, i) { return (i ? 'L' : 'M') + x(p.threshold) + ' ' + y(p[s]); }).join(' ');
      el(svg, 'path', { class: 'series ' + s, d: d, 'data-series': s });
      pts.forEach(function (p) { el(svg, 'circle', { class: 'point', cx: x(p.threshold), cy: y(p[s]), r: 3, 'data-series': s }); });
      // Names at the right end, beside the last point (moved apart below when two lines end together).
      el(svg, 'text', { class: 'axis-label label series-label', x: x(hi) + 8, y: y(pts[pts.length - 1][s]) + 4 }, names[k]);
    });
    if (data.threshold !== undefined) thresholdLine(svg, x(data.threshold), data.threshold);
  }
  // 2. Forms opened vs threshold; 3. form precision, pair precision and recall vs threshold (truth file given).
  if (data.sweep.length) {
    var maxForms = Math.max(1, Math.max.apply(null, data.sweep.map(function (p) { return p.forms; })));
    sweepChart('forms', 'Review forms opened by threshold', ['forms'], ['forms'], 'forms', maxForms);
    if (data.truthPairs !== undefined) sweepChart('quality', 'Precision and recall by threshold', ['formPrecision', 'precision', 'recall'], ['form precision', 'pair precision', 'pair recall'], 'share', 1,
      'form precision: share of the forms that show a true duplicate (what a reviewer sees); pair precision: share of the pairs listed that are true; pair recall: share of the true pairs listed');
  }

  // 4. Estimated m and u per level (log scale), one row per level, probabilistic model only.
  if (data.parameters) {
    var svg = chart('parameters', 'Estimated m and u per comparison level (log scale)', 'blue: m = how often a true duplicate shows the level; orange: u = how often two different people do');
    var levels = [];
    data.parameters.attributes.forEach(function (a) { a.levels.forEach(function (l) { levels.push({ name: a.attribute + ': ' + l.level, m: l.m, u: l.u }); }); });
    var lg = function (v) { return Math.log10(Math.max(v, 1e-6)); };
    var NAMES = 320, ROW = 18, top = T, height = top + levels.length * ROW + 40;
    svg.setAttribute('height', height);
    var x = scale(-6, 0, NAMES, W - R);
    levels.forEach(function (l, i) {
      var y0 = top + i * ROW;
      el(svg, 'text', { class: 'tick level-name', x: NAMES - 6, y: y0 + 12, 'text-anchor': 'end' }, l.name);
      el(svg, 'rect', { class: 'bar m', x: NAMES, y: y0 + 1, width: x(lg(l.m)) - NAMES, height: 7, 'data-level': l.name });
      el(svg, 'rect', { class: 'bar u', x: NAMES, y: y0 + 8, width: x(lg(l.u)) - NAMES, height: 7, 'data-level': l.name });
    });
    var axisY = top + levels.length * ROW + 4;
    el(svg, 'line', { class: 'axis', x1: NAMES, y1: axisY, x2: W - R, y2: axisY });
    [-6, -4, -2, 0].forEach(function (v) { el(svg, 'text', { class: 'tick', x: x(v), y: axisY + 14, 'text-anchor': 'middle' }, '1e' + v); });
    el(svg, 'text', { class: 'axis-label', x: (NAMES + W - R) / 2, y: axisY + 32, 'text-anchor': 'middle' }, 'probability (log scale)');
  }

  // Labels: move apart those that overlap, then grow each chart to hold every label.
  function box(e) { return e.getBoundingClientRect(); }
  function hit(a, b) { return a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5; }
  var svgs = Array.prototype.slice.call(document.querySelectorAll('svg[data-chart]'));
  svgs.forEach(function (svg) {
    var movable = Array.prototype.slice.call(svg.querySelectorAll('text.label'));
    var texts = Array.prototype.slice.call(svg.querySelectorAll('text'));
    for (var round = 0; round < 20; round++) {
      var moved = false;
      movable.forEach(function (t) {
        texts.forEach(function (o) {
          if (o === t || !hit(box(t), box(o))) return;
          var step = box(o).bottom - box(t).top + 2;
          t.setAttribute('y', Number(t.getAttribute('y')) + step);
          moved = true;
        });
      });
      if (!moved) break;
    }
    var s = box(svg);
    var lo = { x: 0, y: 0 }, hi = { x: s.width, y: s.height };
    texts.forEach(function (t) {
      var b = box(t);
      lo.x = Math.min(lo.x, b.left - s.left - 2); lo.y = Math.min(lo.y, b.top - s.top - 2);
      hi.x = Math.max(hi.x, b.right - s.left + 2); hi.y = Math.max(hi.y, b.bottom - s.top + 2);
    });
    var w = Math.ceil(hi.x - lo.x), h = Math.ceil(hi.y - lo.y);
    svg.setAttribute('viewBox', Math.floor(lo.x) + ' ' + Math.floor(lo.y) + ' ' + w + ' ' + h);
    svg.setAttribute('width', w); svg.setAttribute('height', h);
  });
  var overlaps = 0, clipped = 0, which = [];
  svgs.forEach(function (svg) {
    var s = box(svg);
    var els = Array.prototype.slice.call(svg.querySelectorAll('text'));
    var texts = els.map(box);
    texts.forEach(function (b, i) {
      if (b.left < s.left - 0.5 || b.top < s.top - 0.5 || b.right > s.right + 0.5 || b.bottom > s.bottom + 0.5) { clipped++; which.push('clipped: ' + els[i].textContent); }
      for (var j = i + 1; j < texts.length; j++) if (hit(b, texts[j])) { overlaps++; which.push(els[i].textContent + ' / ' + els[j].textContent); }
    });
  });
  if (which.length) document.body.setAttribute('data-unreadable', which.join(' | '));
  document.body.setAttribute('data-overlaps', String(overlaps));
  document.body.setAttribute('data-clipped', String(clipped));
  document.body.setAttribute('data-drawn', String(svgs.length));
})();
`;
