/**
 * `fusion-proxy match`: every candidate kept unless --top-k; with the probabilistic model the summary's
 * parameters and threshold sweep; --report renders in headless Chromium and its charts draw.
 * The probabilistic pairs come from a stand-in matcher that honours the contract of
 * src/core/matching/types.ts (probability, matchWeight, explanation, parameters()), so that every number
 * on the page is known here; the model itself is tested in test/matching.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Matcher } from '../../src/core/matching';
import { type AsyncMatcher, inThread } from '../../src/core/matching/parallel/async-matcher';
import type {
  MatchRecord,
  MatchResult,
  MatchingSettings,
  ModelParameters,
  PotentialDuplicate,
} from '../../src/core/matching/types';
import { matchCli as cli, matchInputs, renderedDom } from '../support/match-cli';
import { scaled } from '../support/time-factor';

const { dir, file } = matchInputs('match-report-');

const PARAMETERS: ModelParameters = {
  version: 1,
  estimatedAt: '2026-11-25T12:00:00.000Z',
  records: 60,
  prior: 0.002,
  attributes: [
    {
      attribute: 'email',
      levels: [
        { level: 'exact', m: 0.8, u: 0.001 },
        { level: 'different', m: 0.2, u: 0.999 },
      ],
    },
    {
      attribute: 'lastName',
      levels: [
        { level: 'exact', m: 0.6, u: 0.01 },
        { level: 'implied by the name', m: 0.3, u: 0.001 },
        { level: 'fuzzy >= 0.92', m: 0.07, u: 0.02 },
        { level: 'different', m: 0.03, u: 0.97 },
      ],
    },
  ],
  // The model adds 0 for "implied by the name" (another attribute counted it): log2(m/u) would be +8.2.
  extra: { neutral: { email: [], lastName: ['implied by the name'] } },
};

/** 40 pairs, weights -6 .. 13.5; probability 1 / (1 + 2^-(w - 4)); account a<i % 20>, identity i<i>. */
const PAIRS = Array.from({ length: 40 }, (_, i) => {
  const weight = -6 + i * 0.5;
  return { accountId: `a${i % 20}`, candidateId: `i${i}`, weight, probability: 1 / (1 + 2 ** -(weight - 4)) };
});
const built: MatchingSettings[] = [];

function standIn(settings: MatchingSettings): Matcher {
  built.push(settings);
  return {
    addBaseline: () => undefined,
    parameters: () => (settings.model === 'probabilistic' ? PARAMETERS : undefined),
    estimate: () => undefined,
    useParameters: () => undefined,
    match(records: readonly MatchRecord[], o?: { topK?: number }): MatchResult {
      const duplicates = new Map<string, PotentialDuplicate[]>();
      const floor = settings.probabilityThreshold ?? 0;
      // Like the real matcher: best first, cut to topK, and every pair above the floor counted as matched.
      for (const p of [...PAIRS].sort((a, b) => b.probability - a.probability)) {
        if (p.probability < floor) continue;
        const list = duplicates.get(p.accountId) ?? [];
        list.push({
          accountId: p.accountId,
          candidateId: p.candidateId,
          candidateKind: 'identity',
          score: Math.round(p.probability * 1000) / 10,
          scores: { email: 100 },
          probability: p.probability,
          matchWeight: p.weight,
          explanation: [{ attribute: 'email', level: 'exact', weight: p.weight }],
        });
        duplicates.set(p.accountId, list);
      }
      const matched = [...duplicates.values()].flat().length;
      let truncated = 0;
      for (const list of duplicates.values()) {
        const keep = o?.topK ?? Number.POSITIVE_INFINITY;
        if (list.length > keep) {
          truncated += list.length - keep;
          list.length = keep;
        }
      }
      return {
        duplicates,
        stats: {
          accounts: records.length,
          baseline: 40,
          pairsCompared: PAIRS.length,
          pairs: {
            matched,
            below_threshold: 0,
            mandatory_failed: 0,
            value_missing: 0,
          },
          accountsWithDuplicates: duplicates.size,
          truncated,
          accountsMissingMandatory: 0,
          accountsWithoutValues: 0,
          candidatesHistogram: [],
          candidatesMean: 2,
          candidatesMax: 2,
          fullScans: {},
          generatorUse: {},
          buildMs: 0,
          matchMs: 0,
        },
      };
    },
  };
}

let useStandIn = false;
// The CLI's matcher (buildRunMatcher: threads from a size these files never reach) over the stand-in.
jest.mock('../../src/core/matching/parallel/parallelism', () => {
  const actual = jest.requireActual('../../src/core/matching/parallel/parallelism');
  return {
    ...actual,
    buildRunMatcher: (settings: MatchingSettings) =>
      mockUseStandIn() ? mockAsync(mockStandIn(settings)) : actual.buildRunMatcher(settings),
  };
});
const mockUseStandIn = () => useStandIn;
const mockStandIn = standIn;
const mockAsync = (m: Matcher): AsyncMatcher => inThread(m);

const identities = file(
  'identities.json',
  JSON.stringify([
    { id: 'i1', attributes: { lastName: 'Smith', email: 'john.smith@acme.com' } },
    { id: 'i2', attributes: { lastName: 'Smith', email: 'jane.smith@acme.com' } },
    { id: 'i3', attributes: { lastName: 'Smith', email: 'j.smith@acme.com' } },
  ]),
);
const accounts = file(
  'accounts.json',
  JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ id: `a${i}`, attributes: { lastName: 'Smith' } }))),
);
const rulesConfig = file(
  'rules.json',
  JSON.stringify({
    matching: { attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100 }], reviewTopK: 1 },
  }),
);
const probConfig = file(
  'prob.json',
  JSON.stringify({
    matching: {
      model: 'probabilistic',
      probabilityThreshold: 0.9,
      attributes: [
        { attribute: 'email', algorithm: 'exact', threshold: 100 },
        { attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 90 },
      ],
    },
  }),
);
// True pairs: the 16 with weight >= 6 (i >= 24), and one the matcher never finds.
const truth = file(
  'truth.csv',
  [
    'accountId,candidateId',
    ...PAIRS.filter((p) => p.weight >= 6).map((p) => `${p.accountId},${p.candidateId}`),
    'a0,i99',
  ].join('\n'),
);

/** The arguments naming this file's identities and accounts, and `config`. */
const inputs = (config: string): string[] => ['--identities', identities, '--accounts', accounts, '--config', config];

const ndjson = (out: string) =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeEach(() => {
  useStandIn = false;
  built.length = 0;
});

describe('fusion-proxy match keeps every candidate unless --top-k', () => {
  it('reports every candidate of each account although reviewTopK is 1, and the best one with --top-k 1', async () => {
    const all = await cli(inputs(rulesConfig));
    expect(all.code).toBe(0);
    const pairs = ndjson(all.out);
    expect(pairs.filter((p) => p.accountId === 'a0').map((p) => p.candidateId)).toEqual(['i1', 'i2', 'i3']);
    // 20 accounts x 3 identities, and each account with every earlier one (190 pairs).
    expect(pairs).toHaveLength(250);
    expect(all.err).toContain('dropped beyond --top-k: 0');

    const one = await cli([...inputs(rulesConfig), '--top-k', '1']);
    expect(ndjson(one.out)).toHaveLength(20);
    expect(one.err).toContain('dropped beyond --top-k: 230');
    expect(one.err).toContain('matched 20, below threshold 0,');
  });

  it.each(['0', '-2', '1.5', 'ten'])('refuses --top-k %s with a clear error', async (bad) => {
    const r = await cli([...inputs(rulesConfig), '--top-k', bad]);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`option --top-k needs a whole number of at least 1, got "${bad}"`);
  });

  it('says where the report could not be written', async () => {
    const r = await cli([...inputs(rulesConfig), '--report', join(dir, 'no', 'such', 'dir.html')]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/cannot write the report .*dir\.html: ENOENT/);
  });
});

describe('fusion-proxy match with the probabilistic model', () => {
  it('collects pairs down to the sweep floor, outputs those at the threshold, prints parameters and the sweep', async () => {
    useStandIn = true;
    const r = await cli([...inputs(probConfig), '--truth', truth]);
    expect(r.code).toBe(0);
    expect(built[0]?.probabilityThreshold).toBe(0.01);
    const out = ndjson(r.out);
    const expected = PAIRS.filter((p) => p.probability >= 0.9);
    expect(out.map((p) => p.candidateId).sort()).toEqual(expected.map((p) => p.candidateId).sort());
    expect(out[0]).toMatchObject({ explanation: [{ attribute: 'email', level: 'exact' }] });
    expect(r.err).toContain('model probabilistic, probability threshold 0.9');
    expect(r.err).toContain('estimated parameters (60 records, prior 0.00200):');
    expect(r.err).toContain('  email: exact m=0.800 u=0.00100 w=+9.64; different m=0.200 u=0.999 w=-2.32');
    // The weights the model really adds: a neutral level shows 0, not log2(m/u).
    expect(r.err).toContain('implied by the name m=0.300 u=0.00100 w=0 (counted elsewhere); fuzzy >= 0.92');
    expect(r.err).toMatch(/How rare a duplicate is: about 0\.20 % of new accounts have one/);
    // Above 0.9: weights >= 7.5 (i >= 27): 13 pairs on 13 accounts, all true; 16 + 1 true pairs in all.
    expect(r.err).toMatch(/^ {2}0\.9: forms 13, pairs 13, precision 1, recall 0\.7647 {2}<- configured$/m);
    expect(r.err).toMatch(/^ {2}0\.8: forms 16, pairs 16, precision 1, recall 0\.9412$/m);
    expect(r.err).toMatch(/^ {2}0\.5: forms 20, pairs 20, precision 0\.8, recall 0\.9412$/m);
    expect(r.err).toMatch(/^ {2}0\.01: forms 20, pairs \d+, precision 0\.\d+, recall 0\.9412$/m);
  });

  it('--top-k cuts only pairs above the threshold: cut pairs are counted as dropped, not as below the threshold', async () => {
    useStandIn = true;
    // Threshold 0.05 (weight >= -0.25, i >= 12): 28 pairs, two on each of a12..a19; the floor 0.01 also
    // collects i = 7..11 (5 pairs below the threshold).
    const config = file(
      'prob-005.json',
      JSON.stringify({
        matching: {
          ...(JSON.parse(readFileSync(probConfig, 'utf8')) as { matching: object }).matching,
          probabilityThreshold: 0.05,
        },
      }),
    );
    const r = await cli([...inputs(config), '--top-k', '1', '--summary-json']);
    expect(r.code).toBe(0);
    const out = ndjson(r.out);
    expect(out).toHaveLength(20);
    expect(out.find((p) => p.accountId === 'a12')?.candidateId).toBe('i32');
    const summary = JSON.parse(r.err) as { duplicates: number; truncated: number; pairs: Record<string, number> };
    expect(summary.duplicates).toBe(20);
    expect(summary.truncated).toBe(8);
    expect(summary.pairs).toMatchObject({ matched: 20, below_threshold: 5 });

    const all = await cli([...inputs(config), '--summary-json']);
    const whole = JSON.parse(all.err) as { duplicates: number; truncated: number; pairs: Record<string, number> };
    expect(whole).toMatchObject({
      duplicates: 28,
      truncated: 0,
      pairs: expect.objectContaining({ matched: 28, below_threshold: 5 }),
    });
  });
});

function chartOf(dom: string, id: string): string | undefined {
  const m = new RegExp(`<svg[^>]*data-chart="${id}"[^>]*>([\\s\\S]*?)</svg>`).exec(dom);
  return m?.[1];
}

const count = (svg: string, re: RegExp) => (svg.match(re) ?? []).length;
const attr = (tag: string, name: string) => Number(new RegExp(`${name}="([^"]+)"`).exec(tag)?.[1]);

describe('the HTML report renders in headless Chromium', () => {
  jest.setTimeout(scaled(180_000));

  it('probabilistic model with a truth file: four charts, threshold line at 0.9', async () => {
    useStandIn = true;
    const page = join(dir, 'prob.html');
    const r = await cli([...inputs(probConfig), '--truth', truth, '--report', page]);
    expect(r.code).toBe(0);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
    const dom = await renderedDom(page);
    expect(dom).toContain('data-drawn="4"');
    const data = JSON.parse(/<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html)![1]!) as {
      histogram: Array<{ count: number; trueCount?: number }>;
      sweep: Array<{ threshold: number }>;
    };

    // Every label readable: none overlaps another, none outside its chart (the page measures its own layout).
    expect(dom).toContain('data-overlaps="0"');
    expect(dom).toContain('data-clipped="0"');

    // With a truth file the histogram splits true (weight >= 6) from false pairs.
    const weights = chartOf(dom, 'weights')!;
    expect(count(weights, /<rect class="bar true"/g)).toBe(data.histogram.length);
    expect(count(weights, /<rect class="bar false"/g)).toBe(data.histogram.length);
    const collected = PAIRS.filter((p) => p.probability >= 0.01);
    expect(data.histogram.reduce((s, b) => s + b.count, 0)).toBe(collected.length);
    expect(data.histogram.reduce((s, b) => s + b.trueCount!, 0)).toBe(collected.filter((p) => p.weight >= 6).length);
    expect(weights).toContain('>match weight</text>');
    expect(weights).toContain('>pairs</text>');
    expect(count(weights, /<line class="threshold"[^>]*data-value="0.9"/g)).toBe(1);

    const forms = chartOf(dom, 'forms')!;
    expect(count(forms, /<path class="series forms"/g)).toBe(1);
    const points = forms.match(/<circle class="point"[^>]*>/g) ?? [];
    expect(points).toHaveLength(data.sweep.length);
    expect(forms).toContain('>probability threshold</text>');
    const line = /<line class="threshold"[^>]*>/.exec(forms)![0];
    expect(attr(line, 'data-value')).toBe(0.9);
    const at = points[data.sweep.findIndex((p) => p.threshold === 0.9)]!;
    expect(attr(line, 'x1')).toBeCloseTo(attr(at, 'cx'), 6);

    const quality = chartOf(dom, 'quality')!;
    expect(count(quality, /<path class="series (formPrecision|precision|recall)"/g)).toBe(3);
    expect(count(quality, /<circle class="point"/g)).toBe(3 * data.sweep.length);
    expect(quality).toContain('>form precision</text>');
    // At 0.5, 20 forms of which 16 show a true pair (a4..a19's best pairs are true): 0.8.
    expect(
      (data.sweep as Array<{ threshold: number; formPrecision?: number }>).find((p) => p.threshold === 0.5)
        ?.formPrecision,
    ).toBe(0.8);
    expect(count(quality, /<line class="threshold"[^>]*data-value="0.9"/g)).toBe(1);

    const parameters = chartOf(dom, 'parameters')!;
    expect(count(parameters, /<rect class="bar m"/g)).toBe(6);
    expect(count(parameters, /<rect class="bar u"/g)).toBe(6);
    expect(parameters).toContain('>lastName: fuzzy &gt;= 0.92</text>');
    // The table: the weight the model uses (0 for a neutral level) and each level in plain words.
    expect(html).toMatch(
      /<td>implied by the name<\/td><td class="why">[^<]*already counted there[^<]*<\/td><td>0\.300<\/td><td>0\.00100<\/td><td>0 \(counted by another attribute\)<\/td>/,
    );
    expect(html).toContain('How rare a duplicate is');
    expect(html).toContain('Match weight: the sum of the weights');
    // False pairs at the threshold: none (all pairs >= 0.9 are true); missed: the closest first, a0-i99 never found.
    expect(html).toContain('Highest false pairs at the threshold</h2><p class="note">none</p>');
    expect(html).toMatch(/<td>a4<\/td><td>i24<\/td><td>0\.8\d\d<\/td>/);
    expect(html).toMatch(/<td>a0<\/td><td>i99<\/td><td>not a candidate<\/td>/);
  });

  it('rules model without a truth file: histogram of scores and forms by minimum score, no m/u, no threshold line', async () => {
    const page = join(dir, 'rules.html');
    const r = await cli([...inputs(rulesConfig), '--report', page]);
    expect(r.code).toBe(0);
    const dom = await renderedDom(page);
    expect(dom).toContain('data-drawn="2"');
    expect(dom).toContain('data-overlaps="0"');
    expect(dom).toContain('data-clipped="0"');
    const weights = chartOf(dom, 'weights')!;
    expect(count(weights, /<rect class="bar"/g)).toBe(1);
    expect(weights).toContain('>overall score</text>');
    expect(chartOf(dom, 'forms')).toContain('>minimum overall score / 100</text>');
    expect(chartOf(dom, 'quality')).toBeUndefined();
    expect(chartOf(dom, 'parameters')).toBeUndefined();
    expect(dom).not.toContain('class="threshold"');
  });
});
