/**
 * #14 item 3: the chart's alerts under `promtool test rules` (Debian's prometheus package; .ci/run
 * installs it). The rules are rendered from the chart, so the test checks what an operator deploys.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { at, find, render } from './support/helm';

const PROMTOOL = '/usr/bin/promtool';

function promtool(args: string[], cwd: string): { status: number | null; out: string } {
  const res = spawnSync(PROMTOOL, args, { cwd, encoding: 'utf8' });
  if (res.error)
    throw new Error(`${PROMTOOL} not runnable (.ci/run installs Debian's prometheus): ${res.error.message}`);
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

describe('alert rules under promtool', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'fusion-rules-'));
    const r = render({ valuesFiles: ['monitoring-values.yaml'], namespace: 'fusion' });
    const groups = at(find(r.objects, 'PrometheusRule', 'fp-fusion-proxy'), 'spec', 'groups');
    writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups }));
    copyFileSync(path.join(__dirname, 'alerts/rules.test.yaml'), path.join(dir, 'rules.test.yaml'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the rendered rules are valid', () => {
    const res = promtool(['check', 'rules', 'rules.yaml'], dir);
    expect(res.out).toMatch(/SUCCESS: 7 rules found/);
    expect(res.status).toBe(0);
  });

  it('pass their unit tests: a rare failure, a throttled tenant, a backlog without workers, throttled callers, quiet', () => {
    const res = promtool(['test', 'rules', 'rules.test.yaml'], dir);
    expect(res.out).toContain('SUCCESS');
    expect(res.status).toBe(0);
  });

  it('the unit tests can fail: an alert that dropped `namespace` does not match them', () => {
    const r = render({ valuesFiles: ['monitoring-values.yaml'], namespace: 'fusion' });
    const groups = at<Array<{ rules: Array<{ expr: string }> }>>(
      find(r.objects, 'PrometheusRule', 'fp-fusion-proxy'),
      'spec',
      'groups',
    );
    for (const rule of groups[0]!.rules) rule.expr = rule.expr.replace(/by \(namespace\)/g, '');
    writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups }));
    const res = promtool(['test', 'rules', 'rules.test.yaml'], dir);
    expect(res.status).not.toBe(0);
    expect(res.out).toMatch(/FusionProxyAggregationFailed/);
  });
});
