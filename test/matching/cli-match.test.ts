import { join } from 'node:path';
import { parseCsv } from '../../src/core/matching/csv';
import { matchCli as cli, matchInputs } from '../support/match-cli';

const { dir, file } = matchInputs('match-cli-');

const config = {
  proxyEnabled: false,
  matching: {
    attributes: [
      { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, mandatory: true },
      { attribute: 'displayName', algorithm: 'name-matcher', threshold: 85 },
      { attribute: 'email', algorithm: 'jaro-winkler', threshold: 92 },
    ],
    reviewTopK: 5,
  },
};

describe('CSV parser (RFC 4180)', () => {
  it('handles quotes, escaped quotes, commas, new lines in fields, CRLF and a BOM', () => {
    expect(parseCsv('\ufeffid,name\r\n1,"Smith, John"\r\n2,"say ""hi"""\n3,"two\nlines"\n\n')).toEqual([
      ['id', 'name'],
      ['1', 'Smith, John'],
      ['2', 'say "hi"'],
      ['3', 'two\nlines'],
    ]);
    expect(parseCsv('a,,c\n')).toEqual([['a', '', 'c']]);
  });
  it('rejects an unclosed quote', () => {
    expect(() => parseCsv('id\n"abc')).toThrow(/not closed/);
  });
});

describe('fusion-proxy match', () => {
  const identities = file(
    'identities.json',
    JSON.stringify([
      { id: 'i1', attributes: { lastName: 'Smith', displayName: 'John Smith', email: 'john.smith@acme.com' } },
      { id: 'i2', attributes: { lastName: 'García', displayName: 'María García', email: 'maria.garcia@acme.com' } },
      { id: 'i3', attributes: { lastName: 'Nguyen', displayName: 'Anh Nguyen', email: 'anh.nguyen@acme.com' } },
    ]),
  );
  const accounts = file(
    'accounts.csv',
    [
      'id,displayName,lastName,email',
      'a1,"Smith, Jon",Smyth,jon.smith@acme.com', // duplicate of i1
      'a2,Maria Garcia,Garcia,mgarcia@other.org', // duplicate of i2
      'a3,Peter Jones,Jones,peter.jones@acme.com', // new person
      'a4,Peter Jones,Jones,pjones@acme.com', // same person as a3 in the same run
      'a5,Anne Nguyen,Nguyen,anne.nguyen@acme.com', // not the same as i3 (truth says so)
    ].join('\n'),
  );
  const configFile = file('config.json', JSON.stringify(config));

  it('prints NDJSON duplicates and a readable summary', async () => {
    const { code, out, err } = await cli(['--identities', identities, '--accounts', accounts, '--config', configFile]);
    expect(code).toBe(0);
    const lines = out
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { accountId: string; candidateId: string; score: number; scores: Record<string, number> },
      );
    expect(lines.map((l) => `${l.accountId}>${l.candidateId}`).sort()).toEqual(['a1>i1', 'a2>i2', 'a4>a3', 'a5>i3']);
    const a1 = lines.find((l) => l.accountId === 'a1')!;
    expect(a1.scores.lastName).toBe(100);
    expect(Object.keys(a1).sort()).toEqual(['accountId', 'candidateId', 'candidateKind', 'score', 'scores']);
    expect(err).toMatch(/potential duplicates 4 on 4 accounts/);
    expect(err).toMatch(/pairs scored/);
  });

  it('reports precision and recall against a truth file, as one JSON line with --summary-json', async () => {
    const truth = file('truth.csv', 'accountId,candidateId\na1,i1\na2,i2\na3,a4\n');
    const { code, err } = await cli([
      '--identities',
      identities,
      '--accounts',
      accounts,
      '--config',
      configFile,
      '--truth',
      truth,
      '--summary-json',
    ]);
    expect(code).toBe(0);
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(1);
    const summary = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(summary).toMatchObject({
      identities: 3,
      accounts: 5,
      duplicates: 4,
      truthPairs: 3,
      truePositives: 3,
      precision: 0.75,
      recall: 1,
    });
  });

  const bad: [string, () => string[], RegExp][] = [
    [
      'a missing file',
      () => ['--identities', join(dir, 'nope.json'), '--accounts', accounts, '--config', configFile],
      /cannot read identities file .*ENOENT/,
    ],
    [
      'bad JSON',
      () => ['--identities', file('bad.json', '[{"id": '), '--accounts', accounts, '--config', configFile],
      /not valid JSON/,
    ],
    [
      'a CSV without id column',
      () => ['--identities', identities, '--accounts', file('noid.csv', 'name\nx\n'), '--config', configFile],
      /no "id" column/,
    ],
    [
      'an unknown algorithm',
      () => [
        '--identities',
        identities,
        '--accounts',
        accounts,
        '--config',
        file(
          'c1.json',
          JSON.stringify({ matching: { attributes: [{ attribute: 'a', algorithm: 'soundex', threshold: 80 }] } }),
        ),
      ],
      /algorithm = "soundex".*allowed one of/,
    ],
    [
      'a threshold out of range',
      () => [
        '--identities',
        identities,
        '--accounts',
        accounts,
        '--config',
        file(
          'c2.json',
          JSON.stringify({ matching: { attributes: [{ attribute: 'a', algorithm: 'dice', threshold: 150 }] } }),
        ),
      ],
      /threshold = 150.*0 to 100/,
    ],
    [
      'no matching attributes',
      () => ['--identities', identities, '--accounts', accounts, '--config', file('c3.json', '{}')],
      /no matching attributes/,
    ],
    ['a missing option', () => ['--identities', identities, '--config', configFile], /--accounts is required/],
    [
      'an unknown option',
      () => ['--identities', identities, '--accounts', accounts, '--config', configFile, '--fast'],
      /unknown option "--fast"/,
    ],
    [
      'a record without id',
      () => ['--identities', file('noid.json', '[{"attributes": {}}]'), '--accounts', accounts, '--config', configFile],
      /record 0 has no "id"/,
    ],
  ];
  it.each(bad)('exits 2 with a clear error on %s', async (_label, argv, message) => {
    const { code, out, err } = await cli(argv());
    expect(code).toBe(2);
    expect(out).toBe('');
    expect(err).toMatch(message);
  });

  it('prints usage with --help', async () => {
    const { code, out } = await cli(['--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/usage: fusion-proxy match/);
  });
});
