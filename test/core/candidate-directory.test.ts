import { CandidateDirectory } from '../../src/core/aggregation/candidate-directory';

describe('the review forms candidate directory', () => {
  const dir = new CandidateDirectory(['email', 'displayName', 'employeeId']);

  it('gives back the name and the matching values kept for a record, as text', () => {
    dir.add('id-1', 'Ann Lee', { email: 'ann@x.org', displayName: 'Ann Lee', employeeId: 42, other: 'not kept' });
    expect(dir.details('id-1')).toEqual({
      name: 'Ann Lee',
      attributes: { email: 'ann@x.org', displayName: 'Ann Lee', employeeId: '42' },
    });
    // The form's JSON keeps the name first.
    expect(Object.keys(dir.details('id-1')!)).toEqual(['name', 'attributes']);
  });

  it('leaves out what is empty or missing: no name, a missing value, the first or the last one', () => {
    dir.add('id-2', '', { displayName: 'Bo' });
    expect(dir.details('id-2')).toEqual({ attributes: { displayName: 'Bo' } });
    dir.add('id-3', 'Cy', { email: 'c@x.org' });
    expect(dir.details('id-3')).toEqual({ name: 'Cy', attributes: { email: 'c@x.org' } });
    dir.add('id-4', 'Di', { employeeId: 'E7' });
    expect(dir.details('id-4')).toEqual({ name: 'Di', attributes: { employeeId: 'E7' } });
    dir.add('id-5', '', {});
    expect(dir.details('id-5')).toEqual({ attributes: {} });
  });

  it('lists multi-valued attributes, writes objects as JSON and keeps its separator out of the values', () => {
    dir.add('id-6', 'Ed\u001fWard', {
      email: ['e@x.org', 'ed@y.org'],
      displayName: { first: 'Ed' },
      employeeId: 'a\u001fb',
    });
    expect(dir.details('id-6')).toEqual({
      name: 'Ed Ward',
      attributes: { email: 'e@x.org, ed@y.org', displayName: '{"first":"Ed"}', employeeId: 'a b' },
    });
  });

  it('knows nothing of a record it was not given, and counts what it holds (a record added again counts once)', () => {
    const d = new CandidateDirectory(['email']);
    d.add('a', 'Gus', {});
    d.add('a', 'Gus', {});
    d.add('b', 'Hal', {});
    expect(d.details('nobody')).toBeUndefined();
    expect(d.size).toBe(2);
  });

  it('a record added again shows its new values, also after its details were read', () => {
    const d = new CandidateDirectory(['email']);
    d.add('a', 'Gus', { email: 'g@x.org' });
    expect(d.details('a')).toEqual({ name: 'Gus', attributes: { email: 'g@x.org' } });
    d.add('a', 'Gustav', { email: 'gustav@x.org' });
    expect(d.details('a')).toEqual({ name: 'Gustav', attributes: { email: 'gustav@x.org' } });
  });

  it('reads a record by the row add() returned as by its id; a row it never gave is nothing', () => {
    const d = new CandidateDirectory(['email', 'lastName']);
    const rows = ['a', 'b', 'c'].map((id, i) => d.add(id, `N${i}`, { email: `${id}@x.org`, lastName: `L${i}` }));
    expect(rows).toEqual([0, 1, 2]);
    for (const [i, id] of ['a', 'b', 'c'].entries()) expect(d.detailsAt(rows[i]!)).toEqual(d.details(id));
    expect(d.detailsAt(1)).toEqual({ name: 'N1', attributes: { email: 'b@x.org', lastName: 'L1' } });
    expect(d.detailsAt(3)).toBeUndefined();
    expect(d.detailsAt(-1)).toBeUndefined();
    // Added again: a new row, which its id now reads; the old row keeps what it held; counted once.
    const again = d.add('b', 'N1b', { email: 'b2@x.org' });
    expect(again).toBe(3);
    expect(d.details('b')).toEqual({ name: 'N1b', attributes: { email: 'b2@x.org' } });
    expect(d.detailsAt(1)).toEqual({ name: 'N1', attributes: { email: 'b@x.org', lastName: 'L1' } });
    expect(d.size).toBe(3);
  });

  it('a candidate of many reviews: one details object for all of them, by row or by id; a new row, a new one', () => {
    const d = new CandidateDirectory(['email']);
    const row = d.add('a', 'Gus', { email: 'g@x.org' });
    const first = d.detailsAt(row);
    expect(d.detailsAt(row)).toBe(first);
    expect(d.details('a')).toBe(first);
    const again = d.add('a', 'Gustav', { email: 'gustav@x.org' });
    expect(d.details('a')).not.toBe(first);
    expect(d.details('a')).toBe(d.detailsAt(again));
    expect(d.detailsAt(row)).toEqual({ name: 'Gus', attributes: { email: 'g@x.org' } });
  });

  it('a directory without matching attributes keeps the names alone', () => {
    const names = new CandidateDirectory([]);
    names.add('a', 'Fay', { email: 'f@x.org' });
    expect(names.details('a')).toEqual({ name: 'Fay', attributes: {} });
  });
});
