/**
 * #26 item 6: the review-flood guard. An aggregation whose matching would send more than
 * matching.maxReviewShare of its new accounts to review stops with REVIEW_FLOOD before creating any
 * form or notification, under both models; the default applies without any setting; raising the
 * share (as for a first aggregation of an overlapping source) lets the run create its forms.
 */
import type { CommandType } from '../../src/core/command-types';
import { isFusionError } from '../../src/core/errors';
import { parseMatchingSettings } from '../../src/core/matching/matching-config';
import { createProductionRunner } from '../../src/runtime/production-runner';
import { startSimulator, type RunningSimulator } from '../../src/simulator';
import { tenantConnection } from '../support/tenant-config';
import { context } from '../core/support';

let sim: RunningSimulator;

beforeAll(async () => {
  sim = await startSimulator({
    seed: 26,
    tenant: { identities: 150, accountsPerSource: 100, machineRate: 0 },
    rateLimit: false,
    logRequests: false,
  });
});

afterAll(async () => {
  await sim.close();
});

/**
 * Rules: matches everyone (every account shares a department with many identities), above the
 * default share. Probabilistic: a loose name and the department send about 30 % to review, above a
 * share of 20 % asked for here.
 */
const FLOODING = {
  rules: {
    limit: '50.0 %',
    matching: { attributes: [{ attribute: 'department', algorithm: 'exact', threshold: 100, mandatory: true }] },
  },
  probabilistic: {
    limit: '20.0 %',
    matching: {
      model: 'probabilistic',
      probabilityThreshold: 0.01,
      maxReviewShare: 0.2,
      attributes: [
        { attribute: 'department', algorithm: 'exact', threshold: 100 },
        { attribute: 'displayName', algorithm: 'name-matcher', threshold: 50 },
      ],
    },
  },
};

async function aggregate(matching: Record<string, unknown>): Promise<{ error?: unknown; items: number }> {
  const runner = createProductionRunner({ taskPollMs: 100 });
  const config = { ...tenantConnection(sim), sources: ['Contractors', 'LDAP'], requestsPerSecond: 1000, matching };
  let items = 0;
  try {
    for await (const _ of runner('std:account:list' as CommandType, {}, config, context([]))) items++;
    return { items };
  } catch (error) {
    return { error, items };
  }
}

describe('the review-flood guard', () => {
  for (const model of ['rules', 'probabilistic'] as const) {
    it(`${model}: stops before any form or notification, saying the share, the count and how to tune`, async () => {
      const formsBefore = sim.tenant.formInstances.size;
      const messagesBefore = sim.control.workflowRuns().length;
      const { error } = await aggregate(FLOODING[model].matching);
      expect(isFusionError(error) && error.code).toBe('REVIEW_FLOOD');
      const message = (error as Error).message;
      expect(message).toMatch(
        /would send \d+ of \d+ new accounts \(\d+\.\d %\) to review, above matching\.maxReviewShare/,
      );
      expect(message).toContain(`matching.maxReviewShare ${FLOODING[model].limit}`);
      expect(message).toContain('fusion-proxy match --report');
      expect(message).toContain('first aggregation');
      expect(sim.tenant.formInstances.size).toBe(formsBefore);
      expect(sim.control.workflowRuns().length).toBe(messagesBefore);
    });
  }

  it('a higher share allowed (a first aggregation of an overlapping source): the run creates its forms', async () => {
    const formsBefore = sim.tenant.formInstances.size;
    const { error } = await aggregate({ ...FLOODING.rules.matching, maxReviewShare: 1 });
    expect(error).toBeUndefined();
    expect(sim.tenant.formInstances.size).toBeGreaterThan(formsBefore);
  });

  it('refuses a share outside (0, 1]', () => {
    for (const bad of [0, -0.1, 1.5, '0.5', Number.NaN])
      expect(() => parseMatchingSettings({ matching: { attributes: [], maxReviewShare: bad } })).toThrow(
        expect.objectContaining({ code: 'MATCHING_INVALID' }),
      );
    expect(parseMatchingSettings({ matching: { attributes: [] } }).maxReviewShare).toBe(0.5);
  });
});
