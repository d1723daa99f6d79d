import { writeFileSync } from 'node:fs';
import { asciiLocal, vary, VARIATIONS, type Person } from './name-variations';
import { Prng } from './prng';
import type { AccountRecord, GroundTruthRow, SchemaAttributeRecord, SourceRecord } from './records';
import { Tenant } from './store';
import { DEPARTMENTS, FIRST_NAMES, LAST_NAMES, MACHINE_WORDS } from './tenant-names';
import { variedSurname } from './varied-surnames';

export interface TenantSpec {
  seed?: number;
  /** Identities (each with an account on the authoritative HR source). Default 50. */
  identities?: number;
  /** Accounts on each managed source. Default 20. */
  accountsPerSource?: number;
  /** Fraction of managed-source accounts that are planted duplicates. Default 0.1. */
  duplicateRate?: number;
  /** Fraction of managed-source accounts that are machine accounts (isMachine). Default 0.02. */
  machineRate?: number;
  /** Fraction of duplicates that copy another managed source's account rather than an identity. Default 0.2. */
  crossSourceRate?: number;
  /** Names of the enabled managed sources. Default ['Contractors', 'LDAP']. */
  managedSources?: string[];
  /** Name of a disabled managed source (false for none). Default 'Legacy'. */
  disabledSource?: string | false;
  authoritativeSource?: string;
  fusionSourceName?: string;
  /** Identities given each "<source> Reviewer" access profile. Default 2. */
  reviewersPerSource?: number;
  /**
   * 'common' (default): the 150 common LAST_NAMES, so a tenant past about 15,000 identities is mostly
   * namesakes; 'varied': synthetic surnames (varied-surnames.ts), so most people have none.
   */
  surnames?: 'common' | 'varied';
}

const BASE_TIME = Date.UTC(2024, 0, 1);
const HR_DOMAIN = 'corp.example.com';

const PERSON_SCHEMA: SchemaAttributeRecord[] = [
  { name: 'uid', type: 'STRING', isMulti: false, isEntitlement: false, description: 'Login name' },
  { name: 'employeeNumber', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'firstName', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'lastName', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'displayName', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'email', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'department', type: 'STRING', isMulti: false, isEntitlement: false },
  { name: 'title', type: 'STRING', isMulti: false, isEntitlement: false },
];

function iso(offsetMinutes: number): string {
  return new Date(BASE_TIME + offsetMinutes * 60_000).toISOString();
}

function slug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

interface Generated extends Person {
  department: string;
  title: string;
}

/**
 * A deterministic tenant: the same spec (seed included) always gives the same ids, names and planted
 * duplicates. Layout: an authoritative "HR" source with one account per identity, enabled managed sources
 * with fresh people, planted duplicates (typos, nicknames, swapped names, diacritics, other e-mail domain)
 * and machine accounts, a disabled managed source, the connector's own source, and one
 * "<source> Reviewer" access profile per managed source assigned to a few identities.
 */
export function generateTenant(spec: TenantSpec = {}): Tenant {
  const seed = spec.seed ?? 1;
  const prng = new Prng(seed);
  const tenant = new Tenant(seed);
  const nIdentities = Math.max(1, spec.identities ?? 50);
  const perSource = Math.max(0, spec.accountsPerSource ?? 20);
  const dupRate = spec.duplicateRate ?? 0.1;
  const machineRate = spec.machineRate ?? 0.02;
  const crossRate = spec.crossSourceRate ?? 0.2;
  const managedNames = spec.managedSources ?? ['Contractors', 'LDAP'];
  const disabledName = spec.disabledSource === undefined ? 'Legacy' : spec.disabledSource;
  const hrName = spec.authoritativeSource ?? 'HR';
  const fusionName = spec.fusionSourceName ?? 'Identity Fusion';
  const reviewersPerSource = spec.reviewersPerSource ?? 2;
  const varied = spec.surnames === 'varied';

  const usedUids = new Map<string, number>();
  const uidFor = (p: Person): string => {
    const base = `${asciiLocal(p.firstName)}.${asciiLocal(p.lastName)}`;
    const n = usedUids.get(base) ?? 0;
    usedUids.set(base, n + 1);
    return n === 0 ? base : `${base}${n}`;
  };
  const person = (): Generated => ({
    firstName: prng.pick(FIRST_NAMES),
    lastName: varied ? variedSurname((l) => prng.pick(l)) : prng.pick(LAST_NAMES),
    email: '',
    department: prng.pick(DEPARTMENTS),
    title: prng.pick(['Analyst', 'Engineer', 'Manager', 'Specialist', 'Director', 'Consultant', 'Associate']),
  });
  const attrsOf = (p: Generated, uid: string, employeeNumber: string): Record<string, unknown> => ({
    uid,
    employeeNumber,
    firstName: p.firstName,
    lastName: p.lastName,
    displayName: `${p.firstName} ${p.lastName}`,
    email: p.email,
    department: p.department,
    title: p.title,
  });

  // ---- the authoritative source and the identities it creates ----
  const hrId = prng.hexId();
  const people: { id: string; person: Generated; uid: string }[] = [];
  const hrAccounts: AccountRecord[] = [];
  for (let i = 0; i < nIdentities; i++) {
    const p = person();
    const uid = uidFor(p);
    p.email = `${uid}@${HR_DOMAIN}`;
    const id = prng.hexId();
    const emp = `E${String(100000 + i)}`;
    const attributes = attrsOf(p, uid, emp);
    tenant.addIdentity({
      id,
      name: uid,
      attributes: { ...attributes },
      access: [],
      inactive: false,
      created: iso(i),
      modified: iso(i),
    });
    people.push({ id, person: p, uid });
    hrAccounts.push({
      id: prng.hexId(),
      sourceId: hrId,
      nativeIdentity: emp,
      name: uid,
      identityId: id,
      disabled: false,
      locked: false,
      isMachine: false,
      manuallyCorrelated: false,
      attributes,
      created: iso(i),
      modified: iso(i),
    });
  }
  const owner = people[0] as { id: string; uid: string };
  tenant.meta.ownerIdentityId = owner.id;
  const mkSource = (id: string, name: string, opts: Partial<SourceRecord>): SourceRecord =>
    tenant.addSource({
      id,
      name,
      description: `${name} (simulated)`,
      authoritative: false,
      enabled: true,
      connector: 'delimited-file-angularsc',
      type: 'DelimitedFile',
      owner: { id: owner.id, name: owner.uid },
      connectorAttributes: {},
      schemaAttributes: PERSON_SCHEMA,
      identityAttribute: 'uid',
      displayAttribute: 'displayName',
      created: iso(0),
      modified: iso(0),
      ...opts,
    });
  mkSource(hrId, hrName, { authoritative: true, identityAttribute: 'employeeNumber' });
  for (const a of hrAccounts) tenant.addAccount(a);

  // ---- managed sources ----
  const truth: GroundTruthRow[] = [];
  const freshBySource: AccountRecord[][] = [];
  let clock = nIdentities;
  const managed = [
    ...managedNames.map((n) => ({ name: n, enabled: true })),
    ...(disabledName ? [{ name: disabledName, enabled: false }] : []),
  ];
  managed.forEach((m, si) => {
    const sourceId = prng.hexId();
    const domain = `${slug(m.name)}.example.net`;
    mkSource(sourceId, m.name, { enabled: m.enabled });
    if (m.enabled) tenant.meta.managedSourceIds.push(sourceId);
    else tenant.meta.disabledSourceIds.push(sourceId);
    const count = m.enabled ? perSource : Math.min(perSource, Math.max(1, Math.floor(perSource / 10)));
    const fresh: AccountRecord[] = [];
    for (let k = 0; k < count; k++) {
      const id = prng.hexId();
      const created = iso(clock++);
      const native = `${slug(m.name).slice(0, 3).toUpperCase()}${String(si)}-${String(k).padStart(6, '0')}`;
      if (prng.chance(machineRate)) {
        const word = prng.pick(MACHINE_WORDS);
        const name = `svc-${word}-${k}`;
        tenant.addAccount({
          id,
          sourceId,
          nativeIdentity: native,
          name,
          disabled: false,
          locked: false,
          isMachine: true,
          manuallyCorrelated: false,
          attributes: { uid: name, displayName: `${word} service ${k}`, email: `${name}@${domain}`, department: 'IT' },
          created,
          modified: created,
        });
        continue;
      }
      let p: Generated;
      let dupOf: { candidateId: string; kind: 'identity' | 'account'; variation: string } | undefined;
      if (m.enabled && prng.chance(dupRate)) {
        const earlier = freshBySource.filter((f) => f.length > 0);
        const variation = prng.pick(VARIATIONS);
        if (earlier.length > 0 && prng.chance(crossRate)) {
          const orig = prng.pick(prng.pick(earlier));
          const oa = orig.attributes;
          const base: Generated = {
            firstName: String(oa['firstName']),
            lastName: String(oa['lastName']),
            email: String(oa['email']),
            department: String(oa['department']),
            title: String(oa['title']),
          };
          const v = vary(prng, base, variation, domain);
          p = { ...base, ...v.person };
          dupOf = { candidateId: orig.id, kind: 'account', variation: v.applied };
        } else {
          const orig = prng.pick(people);
          const v = vary(prng, orig.person, variation, domain);
          p = { ...orig.person, ...v.person };
          if (v.applied !== 'emailDomain' && prng.chance(0.5))
            p.email = `${asciiLocal(p.firstName)}.${asciiLocal(p.lastName)}@${domain}`;
          dupOf = { candidateId: orig.id, kind: 'identity', variation: v.applied };
        }
      } else {
        p = person();
        p.email = '';
      }
      const uid = uidFor(p);
      if (!p.email) p.email = `${uid}@${domain}`;
      const acct: AccountRecord = {
        id,
        sourceId,
        nativeIdentity: native,
        name: uid,
        disabled: false,
        locked: false,
        isMachine: false,
        manuallyCorrelated: false,
        attributes: attrsOf(p, uid, `${native.slice(0, 1)}${String(200000 + k)}`),
        created,
        modified: created,
      };
      tenant.addAccount(acct);
      if (dupOf) truth.push({ accountId: id, ...dupOf });
      else fresh.push(acct);
    }
    freshBySource.push(m.enabled ? fresh : []);
  });

  // ---- the connector's own source and the reviewer access profiles ----
  const fusionId = prng.hexId();
  mkSource(fusionId, fusionName, {
    authoritative: true,
    connector: 'identity-fusion',
    type: 'Identity Fusion',
    description: 'Identity deduplication connector (simulated)',
    connectorAttributes: {
      spConnectorInstanceId: prng.hexId(),
      spConnectorSpecId: prng.hexId(),
      sources: managedNames,
      cloudDisplayName: fusionName,
    },
    identityAttribute: 'id',
    displayAttribute: 'name',
    schemaAttributes: [
      { name: 'id', type: 'STRING', isMulti: false, isEntitlement: false },
      { name: 'name', type: 'STRING', isMulti: false, isEntitlement: false },
      ...PERSON_SCHEMA.slice(1),
    ],
  });
  tenant.meta.fusionSourceId = fusionId;
  tenant.meta.fusionSourceName = fusionName;
  for (const m of managed) {
    const ap = tenant.addAccessProfile({
      id: prng.hexId(),
      name: `${m.name} Reviewer`,
      description: `Reviews potential duplicates from ${m.name}`,
      sourceId: fusionId,
      ownerId: owner.id,
      enabled: true,
      requestable: true,
      created: iso(0),
      modified: iso(0),
    });
    const pool = people.slice(0, Math.min(people.length, 20));
    const picked = new Set<string>();
    for (let r = 0; r < Math.min(reviewersPerSource, pool.length); r++) {
      let cand = prng.pick(pool).id;
      while (picked.has(cand)) cand = prng.pick(pool).id;
      picked.add(cand);
      tenant.assignAccessProfile(cand, ap.id);
    }
  }

  // ---- one passed aggregation event per source (index `events`) ----
  for (const s of tenant.sources.values()) {
    if (s.id === fusionId) continue;
    tenant.addEvent({
      id: prng.hexId(),
      name: 'Aggregate Source Account Passed',
      type: 'SOURCE_MANAGEMENT',
      technicalName: 'SOURCE_ACCOUNT_AGGREGATE_PASSED',
      operation: 'AGGREGATE',
      status: 'PASSED',
      objects: ['SOURCE', 'ACCOUNT'],
      target: { name: `${s.name} [source]` },
      created: iso(clock),
      attributes: { sourceName: s.name },
    });
  }
  tenant.groundTruth = truth;
  return tenant;
}

/** Writes the planted duplicates as CSV `accountId,candidateId` (plus kind and variation when `detailed`). */
export function writeGroundTruth(tenant: Tenant, file: string, opts: { detailed?: boolean } = {}): number {
  const rows = tenant.groundTruth.map((r) =>
    opts.detailed ? `${r.accountId},${r.candidateId},${r.kind},${r.variation}` : `${r.accountId},${r.candidateId}`,
  );
  const header = opts.detailed ? 'accountId,candidateId,kind,variation' : 'accountId,candidateId';
  writeFileSync(file, `${[header, ...rows].join('\n')}\n`);
  return rows.length;
}
