/**
 * Records a shard is told to exclude (a lean owner's foreseen accounts sent to review) are no
 * candidate in any later slice, in process and in a matching thread alike; the other candidates and
 * their scores do not change. The queue's child jobs are checked in test/queue/matching-shard-jobs.
 */
import { inProcessShard } from '../../src/core/matching/parallel/shard';
import { workerShard } from '../../src/core/matching/parallel/worker-shard';
import { checkExclusion } from './support/exclusion-check';
import { RULES } from './support/two-rules';

describe('records excluded from a shard', () => {
  for (const [label, start] of [
    ['in process', inProcessShard],
    ['in a matching thread', workerShard],
  ] as const) {
    it(`${label}: never a candidate again, the rest unchanged, fewer pairs scored`, async () => {
      for (const settings of RULES) {
        const shard = start(settings);
        try {
          await checkExclusion(shard, settings);
        } finally {
          await shard.close();
        }
      }
    });
  }
});
