/**
 * The probabilistic model's e-mail columns (src/core/matching/probabilistic/email-column.ts) keep
 * where a local part ends, a domain number and two flags instead of each record's parts: what they
 * read back must be what emailParts() gives for the record's value and names, for every shape of
 * value (no @, several, digits, an empty local part or domain, characters beyond Latin-1), also
 * after records are dropped and others take their numbers.
 */
import { emailParts } from '../../src/core/matching/probabilistic/comparators';
import { DomainNumbers, EmailColumn, EmailView } from '../../src/core/matching/probabilistic/email-column';
import { ValueColumn } from '../../src/core/matching/probabilistic/value-column';

const VALUES: [string, string[]][] = [
  ['john.smith@corp.example.com', ['john', 'smith']],
  ['john.smith2@corp.example.com', ['john', 'smith']],
  ['jsmith', ['john', 'smith']],
  ['j.smith99', ['john', 'smith']],
  ['a@b@corp.example.com', []],
  ['trailing@', ['trailing']],
  ['@nolocal.example.com', []],
  ['', []],
  ['zoë.müller@beispiel.de', ['zoë', 'müller']],
  ['李.王@例子.中国', ['李', '王']],
  ['JOHN.SMITH@CORP.EXAMPLE.COM', ['john', 'smith']],
];

function filled(col: EmailColumn, values: ValueColumn, rows: [string, string[]][]): void {
  for (const [v, names] of rows) {
    values.push(v);
    col.push(names);
  }
}

describe('e-mail columns', () => {
  it('read back what emailParts gives for each value and its names', () => {
    const values = new ValueColumn();
    const col = new EmailColumn(values, new DomainNumbers());
    filled(col, values, VALUES);
    const view = new EmailView();
    VALUES.forEach(([v, names], r) => {
      const want = emailParts(v, names);
      expect({ ...col.read(r, view) }).toEqual({ ...want });
      expect([col.local(r), col.domainOf(r), col.builtFromNames(r)]).toEqual([want.local, want.domain, want.fromNames]);
    });
  });

  it('read the records that take the numbers of dropped ones as their own', () => {
    const values = new ValueColumn();
    const col = new EmailColumn(values, new DomainNumbers());
    filled(col, values, VALUES.slice(0, 4));
    values.truncate(2);
    col.truncate(2);
    const later = VALUES.slice(4);
    filled(col, values, later);
    const view = new EmailView();
    later.forEach(([v, names], k) => expect({ ...col.read(2 + k, view) }).toEqual({ ...emailParts(v, names) }));
    expect({ ...col.read(1, view) }).toEqual({ ...emailParts(VALUES[1]![0], VALUES[1]![1]) });
  });
});
