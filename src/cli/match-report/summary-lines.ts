/** The summary's lines about the probabilistic model: its parameters (weights as used) and the threshold sweep. */
import { usedWeight } from '../../core/matching/probabilistic/diagnostics';
import { aliasPairsFrom } from '../../core/matching/probabilistic/domain-aliases';
import type { ModelParameters } from '../../core/matching/types';
import { priorWords } from './level-words';
import type { SweepPoint } from './report-data';

export function parameterLines(p: ModelParameters): string[] {
  const lines = [`estimated parameters (${p.records} records, prior ${p.prior.toPrecision(3)}):`];
  for (const a of p.attributes) {
    const levels = a.levels.map((l) => {
      // The weight the model adds: 0 for a level whose evidence another attribute counts.
      const w = l.m > 0 && l.u > 0 ? usedWeight(p, a.attribute, l.level, l.m, l.u) : NaN;
      const shown =
        w === 0 && Math.log2(l.m / l.u) !== 0
          ? ' w=0 (counted elsewhere)'
          : Number.isFinite(w)
            ? ` w=${w >= 0 ? '+' : ''}${w.toFixed(2)}`
            : '';
      return `${l.level} m=${l.m.toPrecision(3)} u=${l.u.toPrecision(3)}${shown}`;
    });
    lines.push(`  ${a.attribute}: ${levels.join('; ')}`);
  }
  const aliases = aliasPairsFrom(p.extra?.domainAliases);
  if (aliases.length > 0) {
    lines.push(`  e-mail domain aliases (one organisation's): ${aliases.map(([a, b]) => `${a} = ${b}`).join(', ')}`);
  }
  lines.push(`  ${priorWords(p.prior, p.records)}`);
  return lines;
}

export function sweepLines(points: readonly SweepPoint[], configured: number | undefined): string[] {
  const lines = ['threshold sweep (probability: forms opened, pairs kept[, precision, recall]):'];
  for (const p of points) {
    const quality = p.precision !== undefined ? `, precision ${p.precision}, recall ${p.recall}` : '';
    lines.push(
      `  ${p.threshold}: forms ${p.forms}, pairs ${p.pairs}${quality}${p.threshold === configured ? '  <- configured' : ''}`,
    );
  }
  return lines;
}
