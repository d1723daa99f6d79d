import { Counter } from 'prom-client';
import { METRIC } from '../../observability/metric-names';
import { registry } from '../../observability/metrics-registry';

const formsCreated = new Counter({
  name: METRIC.reviewFormsCreated,
  help: 'Review form instances sent to reviewers (new forms and forms sent again after expiry)',
  registers: [registry],
});

export function recordReviewFormCreated(): void {
  formsCreated.inc();
}
