import { prepareAttribute } from '../../src/core/matching/attribute-runtime';
import { buildMatcher } from '../../src/core/matching';
import { ShardEngine } from '../../src/core/matching/parallel/shard';
import { encodeRecords } from '../../src/core/matching/parallel/record-columns';
import type { MatchRecord, MatchingSettings } from '../../src/core/matching/types';
import { MAIN_SETTINGS, generate } from '../../bench/matching-data';

/**
 * The aggregation matches a batch of new accounts, then adds the ones it creates (under new ids,
 * same values) to the baseline: their prepared values are reused instead of prepared again. A hit
 * must be exactly what a fresh preparation gives, only for the last batch, and never for a value
 * that changed in between.
 */
const NAME = { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, mandatory: true } as const;
/**
 * The runtime-level tests tell a reused value from a fresh one by identity, so they use Dice, whose
 * prepare makes a new value per call (the name matcher's own memo shares its values by text).
 */
const DICE = { ...NAME, algorithm: 'dice' } as const;

const rec = (id: string, displayName: unknown): MatchRecord => ({ id, attributes: { displayName } });

describe('prepared values of a match() batch reused by the addBaseline() that follows', () => {
  it('the runtime hands the batch value back for the same raw value, a fresh one otherwise', () => {
    const rt = prepareAttribute(DICE, [rec('i1', 'Ann Lee')]);
    rt.append([rec('n1', 'Bob  Stone'), rec('n2', ['Cy Fox', 'Cyrus Fox'])], true);
    const bob = rt.first(1);
    const cy = rt.first(2);
    rt.truncate(1);
    rt.append([rec('k1', 'Bob  Stone'), rec('k2', ['Cy Fox', 'Cyrus Fox']), rec('k3', 'Bob Stone')]);
    expect(rt.first(1)).toBe(bob);
    // Multi-valued values are not remembered; a differently spelled raw value is prepared itself.
    expect(rt.first(2)).not.toBe(cy);
    expect(rt.first(2)).toEqual(cy);
    expect(rt.first(3)).not.toBe(bob);
    expect(rt.first(3)).toEqual(bob);
    expect(rt.score(1, 3)).toBe(100);
  });

  it('only the last batch is remembered', () => {
    const rt = prepareAttribute(DICE);
    rt.append([rec('n1', 'Bob Stone')], true);
    const first = rt.first(0);
    rt.truncate(0);
    rt.append([rec('n2', 'Dee Ray')], true);
    rt.truncate(0);
    rt.append([rec('k1', 'Bob Stone')]);
    expect(rt.first(0)).not.toBe(first);
    expect(rt.first(0)).toEqual(first);
  });

  it('a value changed between match() and addBaseline() is prepared from its new text', () => {
    const m = buildMatcher({ attributes: [NAME], reviewTopK: 10 });
    m.addBaseline([rec('i1', 'Dee Ray')]);
    const account = rec('a1', 'Bob Stone');
    expect(m.match([account]).duplicates.size).toBe(0);
    account.attributes.displayName = 'Dee Ray';
    m.addBaseline([account]);
    const r = m.match([rec('a2', 'Dee Ray')]);
    expect(
      r.duplicates
        .get('a2')!
        .map((d) => d.candidateId)
        .sort(),
    ).toEqual(['a1', 'i1']);
  });

  it('a shard reuses the normalised texts of its last block() for the baseline that follows', () => {
    const settings: MatchingSettings = { attributes: [NAME], reviewTopK: 10 };
    const shard = new ShardEngine(settings);
    let key = 0;
    const cols = (rs: MatchRecord[]) => encodeRecords(rs, settings.attributes, () => key++);
    shard.addBaseline(cols([rec('i1', 'Ann Lee')]));
    const batch = [rec('n1', 'Ann Lee'), rec('n2', 'Bob Stone')];
    const slice = shard.block(cols(batch), 0, 2);
    expect(Array.from(slice.candidates)).toEqual([0]);
    shard.addBaseline(cols(batch));
    const again = shard.block(cols([rec('n3', 'Bob Stone')]), 0, 1);
    expect(Array.from(again.candidates)).toEqual([2]);
  });

  it('an aggregation-shaped run gives the same results as one whose baseline records are fresh copies', () => {
    const { identities, accounts } = generate(5, 3_000, 3_000);
    const reused = buildMatcher(MAIN_SETTINGS);
    const fresh = buildMatcher(MAIN_SETTINGS);
    reused.addBaseline(identities);
    fresh.addBaseline(identities);
    const copy = (rs: MatchRecord[]): MatchRecord[] => JSON.parse(JSON.stringify(rs)) as MatchRecord[];
    for (let i = 0; i < accounts.length; i += 250) {
      const batch = accounts.slice(i, i + 250);
      const a = reused.match(batch, { topK: Infinity });
      const b = fresh.match(copy(batch), { topK: Infinity });
      expect([...a.duplicates]).toEqual([...b.duplicates]);
      // The created accounts join under new ids, as the aggregation adds them.
      const created = batch.filter((_, k) => k % 3 !== 0).map((r) => ({ id: `key-${r.id}`, attributes: r.attributes }));
      reused.addBaseline(created);
      fresh.addBaseline(copy(created));
    }
  });
});
