/**
 * `fusion-proxy match` prints the e-mail domain aliases the probabilistic model found beside its
 * parameters, and credits an address moved to such a domain.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMatch } from '../../src/cli/match';

const dir = mkdtempSync(join(tmpdir(), 'match-aliases-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const GIVEN = ['ada', 'bo', 'cy', 'dee', 'eli', 'fay', 'gil', 'hal', 'ida', 'jon'];
const LAST = ['okafor', 'lindqvist', 'moreau', 'tanaka', 'ivanova', 'brennan', 'haddad', 'novak'];
const people = GIVEN.flatMap((g) => LAST.map((l) => ({ g, l })));
const record = (id: string, p: { g: string; l: string }, domain: string) => ({
  id,
  attributes: { displayName: `${p.g} ${p.l}`, lastName: p.l, email: `${p.g}.${p.l}@${domain}` },
});

function file(name: string, content: unknown): string {
  const p = join(dir, name);
  writeFileSync(p, JSON.stringify(content));
  return p;
}

async function cli(argv: string[]): Promise<{ code: number; err: string }> {
  let err = '';
  const code = await runMatch(argv, { stdout: () => undefined, stderr: (t) => (err += t) });
  return { code, err };
}

it('prints the domain aliases with the estimated parameters', async () => {
  const identities = file(
    'identities.json',
    people.map((p, i) => record(`i${i}`, p, 'acme.com')),
  );
  // A third of the people moved to the group's new domain; a few namesakes at a partner.
  const moved = people.filter((_, i) => i % 3 === 0).map((p, i) => record(`a${i}`, p, 'acme-group.com'));
  const partner = people.slice(0, 3).map((p, i) => record(`p${i}`, { g: p.g, l: `${p.l}x` }, 'partner.org'));
  const accounts = file('accounts.json', [...moved, ...partner]);
  const config = file('config.json', {
    matching: {
      model: 'probabilistic',
      attributes: [
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80, kind: 'name' },
        { attribute: 'email', algorithm: 'exact', threshold: 100, kind: 'email' },
        { attribute: 'lastName', algorithm: 'double-metaphone', threshold: 100, kind: 'surname' },
      ],
    },
  });
  const r = await cli(['--config', config, '--identities', identities, '--accounts', accounts]);
  expect(r.code).toBe(0);
  expect(r.err).toContain("e-mail domain aliases (one organisation's): acme-group.com = acme.com\n");
  expect(r.err).not.toContain('partner.org =');
});
