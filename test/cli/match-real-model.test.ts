/**
 * `fusion-proxy match` with the real probabilistic model on the labelled namesake set of bench:quality:
 * the summary's parameters and sweep agree with the pairs it prints, and the report draws every chart.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { namesakeSet, truthPairs } from '../../bench/quality-data';
import { matchCli as cli, matchInputs, renderedDom } from '../support/match-cli';
import { scaled } from '../support/time-factor';

const { dir, file } = matchInputs('match-real-');

const set = namesakeSet(11, 300, 300);
const identities = file('identities.json', JSON.stringify(set.identities));
const accounts = file('accounts.json', JSON.stringify(set.accounts));
const truth = file(
  'truth.csv',
  ['accountId,candidateId', ...truthPairs(set).map(([account, candidate]) => `${account},${candidate}`)].join('\n'),
);
const config = file(
  'config.json',
  JSON.stringify({
    matching: {
      model: 'probabilistic',
      attributes: [
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
        { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92, kind: 'email' },
        { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
        { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100, kind: 'identifier' },
      ],
    },
  }),
);

interface JsonSummary {
  duplicates: number;
  precision: number;
  recall: number;
  probabilityThreshold: number;
  parameters: { attributes: Array<{ attribute: string; levels: unknown[] }> };
  sweep: Array<{ threshold: number; pairs: number; precision: number; recall: number }>;
}

describe('fusion-proxy match with the probabilistic model (real model)', () => {
  jest.setTimeout(scaled(180_000));

  it('prints pairs at the threshold with their explanation, a consistent sweep, and a report whose charts all draw', async () => {
    const page = join(dir, 'report.html');
    const args = ['--identities', identities, '--accounts', accounts, '--config', config, '--truth', truth];
    const r = await cli([...args, '--summary-json', '--report', page]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.err.split('\n')[0]!) as JsonSummary;
    const pairs = r.out
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            probability: number;
            matchWeight: number;
            explanation: Array<{ attribute: string; weight: number }>;
          },
      );
    expect(pairs.length).toBe(summary.duplicates);
    expect(pairs.length).toBeGreaterThan(0);
    for (const p of pairs) {
      expect(p.probability).toBeGreaterThanOrEqual(0.9);
      expect(p.explanation.map((e) => e.attribute)).toEqual([
        'displayName',
        'email',
        'lastName',
        'employeeNumber',
        'prior',
      ]);
      // The prior has its own entry: the weights add up to the match weight (each rounded to 0.01).
      const sum = p.explanation.reduce((t, e) => t + e.weight, 0);
      expect(Math.abs(sum - p.matchWeight)).toBeLessThanOrEqual(0.035);
    }
    expect(summary.parameters.attributes.map((a) => a.attribute)).toEqual([
      'displayName',
      'email',
      'lastName',
      'employeeNumber',
    ]);
    const atThreshold = summary.sweep.find((p) => p.threshold === summary.probabilityThreshold)!;
    expect(atThreshold).toMatchObject({
      pairs: summary.duplicates,
      precision: summary.precision,
      recall: summary.recall,
    });
    // Lower thresholds keep at least as many pairs.
    for (let i = 1; i < summary.sweep.length; i++)
      expect(summary.sweep[i]!.pairs).toBeLessThanOrEqual(summary.sweep[i - 1]!.pairs);

    const text = await cli(args);
    expect(text.err).toMatch(/^estimated parameters \(\d+ records, prior [\d.e-]+\):$/m);
    expect(text.err).toMatch(/^ {2}employeeNumber: .* m=[\d.e-]+ u=[\d.e-]+/m);
    expect(text.err).toMatch(/^ {2}0\.9: forms \d+, pairs \d+, precision [\d.]+, recall [\d.]+ {2}<- configured$/m);

    const dom = await renderedDom(page);
    expect(dom).toContain('data-drawn="4"');
    const levels = summary.parameters.attributes.reduce((n, a) => n + a.levels.length, 0);
    expect((dom.match(/<rect class="bar m"/g) ?? []).length).toBe(levels);
    expect((dom.match(/<line class="threshold"[^>]*data-value="0.9"/g) ?? []).length).toBe(3);
    // Nothing loaded from elsewhere (the SVG namespace URI is a name, not a request).
    expect(readFileSync(page, 'utf8')).not.toMatch(/(src|href)=|fetch\(|XMLHttpRequest|@import|url\(/);
  });
});
