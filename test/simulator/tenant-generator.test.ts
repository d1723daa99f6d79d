import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateTenant, writeGroundTruth, type Tenant } from '../../src/simulator';
import { stripDiacritics } from '../../src/simulator/name-variations';

function fingerprint(t: Tenant): string {
  return JSON.stringify({
    sources: [...t.sources.values()].map((s) => [s.id, s.name, s.connectorAttributes]),
    accounts: [...t.accounts.values()].map((a) => [
      a.id,
      a.sourceId,
      a.nativeIdentity,
      a.identityId,
      a.isMachine,
      a.attributes,
    ]),
    identities: [...t.identities.values()].map((i) => [i.id, i.name, i.access]),
    truth: t.groundTruth,
  });
}

const spec = { identities: 300, accountsPerSource: 200, duplicateRate: 0.25, machineRate: 0.05 };

describe('tenant generator', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = generateTenant({ ...spec, seed: 42 });
    const b = generateTenant({ ...spec, seed: 42 });
    const c = generateTenant({ ...spec, seed: 43 });
    expect(fingerprint(a)).toBe(fingerprint(b));
    expect(fingerprint(a)).not.toBe(fingerprint(c));
  });

  it('varied surnames: deterministic, and a large tenant mostly without namesakes (common: nearly all)', () => {
    const big = { identities: 20_000, accountsPerSource: 10, duplicateRate: 0 };
    const namesakeShare = (t: Tenant): number => {
      const names = new Map<string, number>();
      for (const i of t.identities.values()) {
        const n = String(i.attributes['displayName']);
        names.set(n, (names.get(n) ?? 0) + 1);
      }
      let shared = 0;
      for (const k of names.values()) if (k > 1) shared += k;
      return shared / t.identities.size;
    };
    const varied = generateTenant({ ...big, seed: 3, surnames: 'varied' });
    expect(fingerprint(varied)).toBe(fingerprint(generateTenant({ ...big, seed: 3, surnames: 'varied' })));
    expect(namesakeShare(varied)).toBeLessThan(0.05);
    expect(namesakeShare(generateTenant({ ...big, seed: 3 }))).toBeGreaterThan(0.5);
    // The default tenant is unchanged by the option's existence.
    expect(fingerprint(generateTenant({ ...spec, seed: 42, surnames: 'common' }))).toBe(
      fingerprint(generateTenant({ ...spec, seed: 42 })),
    );
  });

  it('lays out the sources, reviewers and the connector source', () => {
    const t = generateTenant({ ...spec, seed: 5 });
    expect([...t.sources.values()].map((s) => [s.name, s.authoritative, s.enabled])).toEqual([
      ['HR', true, true],
      ['Contractors', false, true],
      ['LDAP', false, true],
      ['Legacy', false, false],
      ['Identity Fusion', true, true],
    ]);
    expect(t.identities.size).toBe(300);
    expect(t.accountsOfSource(t.meta.managedSourceIds[0] as string).size).toBe(200);
    const fusion = t.sources.get(t.meta.fusionSourceId as string);
    expect(fusion?.connectorAttributes['spConnectorInstanceId']).toMatch(/^[0-9a-f]{32}$/);
    expect(fusion?.owner.id).toBe(t.meta.ownerIdentityId);
    const aps = [...t.accessProfiles.values()].map((p) => p.name);
    expect(aps).toEqual(['Contractors Reviewer', 'LDAP Reviewer', 'Legacy Reviewer']);
    for (const ap of t.accessProfiles.values()) expect(t.identitiesWithAccess(ap.id)).toHaveLength(2);
    const machines = [...t.accounts.values()].filter((a) => a.isMachine);
    expect(machines.length).toBeGreaterThan(0);
    expect(
      machines.every(
        (m) => t.meta.managedSourceIds.includes(m.sourceId) || t.meta.disabledSourceIds.includes(m.sourceId),
      ),
    ).toBe(true);
  });

  it('plants duplicates with realistic variations, recorded in the ground truth', () => {
    const t = generateTenant({ ...spec, seed: 9 });
    expect(t.groundTruth.length).toBeGreaterThan(50);
    const kinds = new Set(t.groundTruth.map((r) => r.variation));
    expect([...kinds].sort()).toEqual(['diacritics', 'emailDomain', 'nickname', 'swap', 'typo']);
    expect(t.groundTruth.some((r) => r.kind === 'account')).toBe(true);
    for (const row of t.groundTruth) {
      const acct = t.accounts.get(row.accountId);
      expect(acct).toBeDefined();
      const dup = acct?.attributes as Record<string, string>;
      const orig = (
        row.kind === 'identity'
          ? t.identities.get(row.candidateId)?.attributes
          : t.accounts.get(row.candidateId)?.attributes
      ) as Record<string, string> | undefined;
      expect(orig).toBeDefined();
      if (!orig) continue;
      if (row.variation === 'swap') {
        expect([dup['firstName'], dup['lastName']]).toEqual([orig['lastName'], orig['firstName']]);
      } else if (row.variation === 'emailDomain') {
        expect(dup['email']?.split('@')[0]).toBe(orig['email']?.split('@')[0]);
        expect(dup['email']).not.toBe(orig['email']);
      } else if (row.variation === 'diacritics') {
        expect(stripDiacritics(`${dup['firstName']} ${dup['lastName']}`)).toBe(
          stripDiacritics(`${orig['firstName']} ${orig['lastName']}`),
        );
        expect(`${dup['firstName']} ${dup['lastName']}`).not.toBe(`${orig['firstName']} ${orig['lastName']}`);
      } else {
        expect(`${dup['firstName']} ${dup['lastName']}`).not.toBe(`${orig['firstName']} ${orig['lastName']}`);
      }
    }
    const nick = t.groundTruth.find((r) => r.variation === 'nickname' && r.kind === 'identity');
    if (nick) {
      const dup = t.accounts.get(nick.accountId)?.attributes['firstName'];
      const orig = t.identities.get(nick.candidateId)?.attributes['firstName'];
      expect(dup).not.toBe(orig);
    }
  });

  it('writes the ground truth as CSV', () => {
    const t = generateTenant({ ...spec, seed: 11 });
    const dir = mkdtempSync(join(tmpdir(), 'sim-truth-'));
    try {
      const file = join(dir, 'truth.csv');
      const n = writeGroundTruth(t, file);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      expect(lines[0]).toBe('accountId,candidateId');
      expect(lines).toHaveLength(n + 1);
      expect(lines[1]).toBe(`${t.groundTruth[0]?.accountId},${t.groundTruth[0]?.candidateId}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
