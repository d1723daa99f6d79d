import { createAccountListCommand } from '../../src/core/commands/account-commands';
import { PER_ACCOUNT_INFO_LINES } from '../../src/core/logging/per-account-lines';
import { RecordingReviewQueue } from '../../src/core/ports/review-queue';
import { collect, failure, harness, run, type Harness, type LogLine } from './support';

const list = (h: Harness, lines?: LogLine[], config?: Record<string, unknown>) =>
  run(createAccountListCommand(h.deps), h, {}, lines, config);

function tenant(extra: Record<string, unknown> = {}): Harness {
  const h = harness(extra);
  const contractors = h.fake.addSource('Contractors');
  const ldap = h.fake.addSource('LDAP');
  h.fake.addAccount(contractors, 'C1', { firstName: 'Ada', lastName: 'Lovelace', department: 'R&D', groups: ['g1'] });
  h.fake.addAccount(contractors, 'C2', { firstName: 'Alan', lastName: 'Turing', department: 'IT', groups: ['g2'] });
  h.fake.addAccount(ldap, 'L1', { firstName: 'Grace', lastName: 'Hopper', department: 'IT', groups: ['g1', 'g3'] });
  h.fake.addAccount(ldap, 'svc-1', { firstName: 'backup', lastName: 'bot' }, { isMachine: true });
  h.fake.addAccount(ldap, 'svc-2', { firstName: 'print', lastName: 'bot' }, { isMachine: true });
  return h;
}

describe('std:account:list', () => {
  test('new connector accounts come out disabled, with mapped and defined attributes; machine accounts skipped with one warning', async () => {
    const h = tenant({
      attributeMaps: [{ newAttribute: 'allGroups', existingAttributes: ['groups'], attributeMerge: 'list' }],
      attributeDefinitions: [
        { name: 'uid', expression: '$firstName.substring(0,1)$lastName', type: 'unique', case: 'lower' },
      ],
    });
    const lines: LogLine[] = [];
    const items = await collect(list(h, lines));
    expect(items).toHaveLength(3);
    for (const item of items) {
      expect(item.disabled).toBe(true);
      expect(item.identity).toMatch(/^[0-9a-f-]{36}$/);
      expect((item.attributes as Record<string, unknown>).id).toBe(item.identity);
    }
    expect(items.map((i) => (i.attributes as Record<string, unknown>).uid).sort()).toEqual(
      ['alovelace', 'ghopper', 'aturing'].sort(),
    );
    expect((items[2]?.attributes as Record<string, unknown>).allGroups).toEqual(['g1', 'g3']);
    const machineWarnings = lines.filter((l) => l.level === 'warn' && /machine accounts/.test(l.msg));
    expect(machineWarnings).toHaveLength(1);
    expect(machineWarnings[0]?.msg).toMatch(/Skipped 2 machine accounts/);
    expect(h.summaries[0]).toMatchObject({
      accountsCreated: 3,
      machineAccountsSkipped: 2,
      accountsPerSource: { Contractors: 2, LDAP: 3 },
    });
  });

  test('a missing source name (exact, case-sensitive) is an error listing the names that exist', async () => {
    const h = tenant({ sources: ['Contractors', 'ldap'] });
    const e = await failure(list(h));
    expect(e.code).toBe('SOURCE_NOT_FOUND');
    expect(e.message).toMatch(/"ldap" not found.*sources that exist: "Contractors", "LDAP"/);
  });

  test('a disabled managed source is skipped with a warning (zero accounts is then explained)', async () => {
    const h = tenant({ sources: ['LDAP'] });
    const ldap = [...h.fake.sources.values()].find((s) => s.name === 'LDAP')!;
    ldap.enabled = false;
    const lines: LogLine[] = [];
    expect(await collect(list(h, lines))).toHaveLength(0);
    expect(lines.some((l) => l.level === 'warn' && /Source "LDAP" is disabled/.test(l.msg))).toBe(true);
    expect(lines.some((l) => l.level === 'warn' && /produced no accounts.*disabled sources: LDAP/.test(l.msg))).toBe(
      true,
    );
  });

  test('account filter (global and per source) excludes accounts', async () => {
    const h = tenant({
      accountFilter: 'attributes.department eq "IT"',
      sourceOptions: { LDAP: { accountFilter: 'not attributes.lastName sw "Hop"' } },
    });
    const items = await collect(list(h));
    expect(items.map((i) => (i.attributes as Record<string, unknown>).lastName)).toEqual(['Turing']);
    expect(h.summaries[0]?.filteredOut).toBe(2);
  });

  test('aggregation batch size limits the run', async () => {
    const h = tenant({ aggregationBatchSize: 2 });
    expect(await collect(list(h))).toHaveLength(2);
    expect(h.summaries[0]?.limitedTo).toBe(2);
  });

  test('a Velocity error fails the aggregation naming attribute, expression, account and kind', async () => {
    const h = tenant({ attributeDefinitions: [{ name: 'mail', expression: '$firstName.$nickname@x.com' }] });
    const e = await failure(list(h));
    expect(e.code).toBe('TEMPLATE_ERROR');
    expect(e.message).toMatch(
      /Attribute definition "mail" failed for account .*Contractors account C1.*null-reference error in expression "\$firstName.\$nickname@x.com": \$nickname is missing/,
    );
  });

  test('forced aggregation: waits for the task; a failed task and a timeout fail clearly', async () => {
    const h = tenant({ sourceOptions: { LDAP: { forceAggregation: true } }, provisioningTimeout: 1 });
    h.fake.taskPolls = 2;
    expect(await collect(list(h))).toHaveLength(3);
    expect(h.fake.calls.startAggregation).toBe(1);
    expect(h.fake.calls.getTask).toBe(2);

    h.fake.taskOutcome = 'ERROR';
    const failed = await failure(list(h));
    expect(failed.code).toBe('AGGREGATION_FAILED');
    expect(failed.message).toMatch(
      /Forced aggregation of source "LDAP" ended with ERROR: connector error: host unreachable/,
    );

    h.fake.taskOutcome = 'SUCCESS';
    h.fake.taskPolls = 1_000_000;
    const timeout = await failure(list(h));
    expect(timeout.message).toMatch(/did not finish within the provisioning timeout of 1 s/);
  });

  test('identity scope: an existing identity is a duplicate; the account waits for review and is not emitted', async () => {
    const h = tenant({
      matching: { attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }] },
      fusionOwnerIsGlobalReviewer: true,
    });
    h.fake.addIdentity('grace', { firstName: 'Grace', lastName: 'Hopper' });
    const reviews = new RecordingReviewQueue();
    h.deps.reviewQueue = () => reviews;
    const items = await collect(list(h));
    expect(items.map((i) => (i.attributes as Record<string, unknown>).lastName).sort()).toEqual(['Lovelace', 'Turing']);
    expect(reviews.pending).toHaveLength(1);
    expect(reviews.pending[0]).toMatchObject({
      accountName: 'L1',
      sourceName: 'LDAP',
      reviewers: ['owner-1'],
      candidates: [{ candidateKind: 'identity' }],
    });
    expect(h.summaries[0]?.potentialDuplicates).toBe(1);

    // A too strict scope query empties the baseline: no duplicate is found, and a warning says so.
    const lines: LogLine[] = [];
    const strict = await collect(list(h, lines, { ...h.config, identityScopeQuery: 'nobody' }));
    expect(strict).toHaveLength(3);
    expect(lines.some((l) => /identity baseline is empty/.test(l.msg))).toBe(true);
    // Include identities off: same.
    expect(await collect(list(h, [], { ...h.config, includeIdentities: false }))).toHaveLength(3);
  });

  test('the first 100 potential duplicates of a run are logged at info, then one line says the rest go to debug', async () => {
    const h = tenant({
      matching: {
        attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }],
        maxReviewShare: 1,
      },
    });
    h.fake.addIdentity('grace', { firstName: 'Grace', lastName: 'Hopper' });
    const ldap = [...h.fake.sources.values()].find((s) => s.name === 'LDAP')!;
    for (let i = 0; i < PER_ACCOUNT_INFO_LINES + 4; i++)
      h.fake.addAccount(ldap, `H${i}`, { firstName: `Grace ${i}`, lastName: 'Hopper' });
    h.deps.reviewQueue = () => new RecordingReviewQueue();
    const lines: LogLine[] = [];
    await collect(list(h, lines));
    const duplicates = PER_ACCOUNT_INFO_LINES + 5; // the tenant's own L1 (Grace Hopper) too
    expect(h.summaries[0]?.potentialDuplicates).toBe(duplicates);
    const about = (level: string, from = lines) =>
      from.filter((l) => l.level === level && /^Potential duplicate/.test(l.msg));
    expect(about('info')).toHaveLength(PER_ACCOUNT_INFO_LINES);
    // At the default level the rest are not written at all.
    expect(about('debug')).toHaveLength(0);
    const notice = lines.filter((l) => /More potential duplicates in this run are logged at debug/.test(l.msg));
    expect(notice).toHaveLength(1);
    expect(notice[0]?.level).toBe('info');
    // The closing line counts them all.
    const finished = lines.find((l) => l.msg === 'Aggregation finished');
    expect(finished?.fields).toMatchObject({ potentialDuplicates: duplicates });

    // With logLevel debug, every one of them is there.
    const debug: LogLine[] = [];
    await collect(list(h, debug, { ...h.config, logLevel: 'debug' }));
    expect(about('info', debug)).toHaveLength(PER_ACCOUNT_INFO_LINES);
    expect(about('debug', debug)).toHaveLength(duplicates - PER_ACCOUNT_INFO_LINES);
  });

  test('same-run duplicates: the second account of one person waits for review, across batches too', async () => {
    const h = tenant({
      batchSize: 1,
      matching: { attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }] },
    });
    const ldap = [...h.fake.sources.values()].find((s) => s.name === 'LDAP')!;
    h.fake.addAccount(ldap, 'L2', { firstName: 'Ada', lastName: 'Lovelace' });
    const items = await collect(list(h));
    expect(items).toHaveLength(3);
    expect(h.summaries[0]?.pendingReviews.map((r) => r.accountName)).toEqual(['L2']);
    expect(h.summaries[0]?.pendingReviews[0]?.candidates[0]?.candidateKind).toBe('account');
  });
});

describe('review decisions (lifecycle queue seam)', () => {
  test('pending waits, "not a duplicate" is created unmatched, "same person as" joins that connector account; decisions completed at the end', async () => {
    const h = tenant({
      matching: { attributes: [{ attribute: 'lastName', algorithm: 'exact', threshold: 100, mandatory: true }] },
    });
    const first = (await collect(list(h))) as {
      identity: string;
      disabled: boolean;
      attributes: Record<string, unknown>;
    }[];
    h.fake.ingest(h.own.id, first);
    const contractors = [...h.fake.sources.values()].find((s) => s.name === 'Contractors')!;
    const twinAda = h.fake.addAccount(contractors, 'C8', { firstName: 'Ada', lastName: 'Lovelace' });
    const twinAlan = h.fake.addAccount(contractors, 'C9', { firstName: 'Alan', lastName: 'Turing' });
    const waiting = h.fake.addAccount(contractors, 'C10', { firstName: 'Grace', lastName: 'Hopper' });
    const ada = h.fake.accountsOf(h.own.id).find((a) => a.attributes.lastName === 'Lovelace')!;
    const completed: string[] = [];
    let discarded: ReadonlySet<string> | undefined;
    h.deps.reviewQueue = () => ({
      submit: async () => undefined,
      readDecisions: async () =>
        new Map([
          [twinAda.id, { kind: 'link' as const, identityId: ada.identityId!, candidateKind: 'identity' as const }],
          [twinAlan.id, { kind: 'new-identity' as const }],
          [waiting.id, { kind: 'pending' as const }],
        ]),
      completeDecisions: async (ids: readonly string[]) => void completed.push(...ids),
      discardUnseen: async (seen: ReadonlySet<string>) => {
        discarded = seen;
        return 0;
      },
    });
    const items = (await collect(list(h))) as { identity: string; attributes: Record<string, unknown> }[];
    const adaItem = items.find((i) => i.identity === ada.nativeIdentity)!;
    expect(adaItem.attributes.accounts).toEqual(expect.arrayContaining([twinAda.id]));
    expect(items.filter((i) => i.attributes.lastName === 'Turing')).toHaveLength(2);
    expect(items.some((i) => (i.attributes.accounts as string[]).includes(waiting.id))).toBe(false);
    expect(h.summaries[1]).toMatchObject({ awaitingReview: 1, potentialDuplicates: 0, accountsCreated: 1 });
    expect(completed.sort()).toEqual([twinAda.id, twinAlan.id].sort());
    expect(discarded?.has(waiting.id)).toBe(true);
  });
});
