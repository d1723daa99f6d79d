/**
 * A part inside its whole on both records (a given name inside the display name) is its own level,
 * weight 0. Whether a record's part lies inside its whole is kept per record (computed when the
 * record is derived): it must follow the records through truncation (a call's new accounts are
 * dropped) and a change of roles, as the per-pair computation did.
 */
import { prepareAttribute } from '../../src/core/matching/attribute-runtime';
import { parseMatchingSettings, type MatchRecord } from '../../src/core/matching';
import { RecordFeatures } from '../../src/core/matching/probabilistic/record-features';

const { attributes: rules } = parseMatchingSettings({
  matching: {
    model: 'probabilistic',
    attributes: [
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
      { attribute: 'firstName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
    ],
  },
});

const person = (id: string, displayName: string, firstName: string): MatchRecord => ({
  id,
  attributes: { displayName, firstName },
});

function features(records: MatchRecord[]) {
  const runtimes = rules.map((r) => prepareAttribute(r));
  const f = new RecordFeatures(runtimes);
  const append = (more: MatchRecord[]): void => {
    for (const rt of runtimes) rt.append(more);
    f.append(more);
  };
  const truncate = (n: number): void => {
    for (const rt of runtimes) rt.truncate(n);
    f.truncate(n);
  };
  append(records);
  return { f, append, truncate };
}

/** The level of firstName for the pair (a, b), with the algorithm's score left to the model. */
function firstNameLevel(f: RecordFeatures, a: number, b: number): number {
  const out = new Int8Array(rules.length);
  f.pairLevels(a, b, [-2, -2], 0, out);
  return out[1]!;
}

describe('a part inside its whole, per record', () => {
  it('is the part level only while both records hold their part inside their whole, through truncate and re-append', () => {
    const { f, append, truncate } = features([
      person('a', 'John Smith', 'John'),
      person('b', 'John Smyth', 'John'),
      person('c', 'Jon Smith', 'John'), // its first name is not inside its display name
    ]);
    f.setRoles({ kinds: ['name', 'name'], partOf: [-1, 0] });
    const partLevel = f.comparators[1]!.partLevel;
    expect(firstNameLevel(f, 0, 1)).toBe(partLevel);
    expect(firstNameLevel(f, 0, 2)).not.toBe(partLevel);

    // The call's record c dropped; another at its number, whose part is inside its whole.
    truncate(2);
    append([person('d', 'John Smithers', 'John')]);
    expect(firstNameLevel(f, 0, 2)).toBe(partLevel);
    // And back: b replaced by one whose part is not inside.
    truncate(1);
    append([person('e', 'Johnny Smith', 'John'), person('f', 'John Smith', 'John')]);
    expect(firstNameLevel(f, 0, 1)).not.toBe(partLevel);
    expect(firstNameLevel(f, 0, 2)).toBe(partLevel);
  });

  it('follows a change of roles: no part, no part level', () => {
    const { f } = features([person('a', 'John Smith', 'John'), person('b', 'John Smyth', 'John')]);
    f.setRoles({ kinds: ['name', 'name'], partOf: [-1, 0] });
    const partLevel = f.comparators[1]!.partLevel;
    expect(firstNameLevel(f, 0, 1)).toBe(partLevel);
    f.setRoles({ kinds: ['name', 'name'], partOf: [-1, -1] });
    expect(firstNameLevel(f, 0, 1)).not.toBe(partLevel);
  });
});
