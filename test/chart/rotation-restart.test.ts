/**
 * #28 item 13: the documented way to roll the pods after a secret rotation restarted the bundled
 * Valkey too (every Deployment of the release), losing every queued job. Each documented
 * `rollout restart` selector, evaluated against the rendered Deployments, selects api and workers only.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CHART_DIR, ofKind, render, type K8sObject } from './support/helm';

const RELEASE = 'fusion-proxy';

/** kubectl's label selector: `k=v`, `k!=v` and `k in (a,b)` terms, comma-separated. */
function matches(selector: string, labels: Record<string, string>): boolean {
  const terms = selector.match(/[^,()]+(?:\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const term = raw.trim();
    const set = /^(\S+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(term);
    if (set) {
      const values = set[3]!.split(',').map((v) => v.trim());
      const has = values.includes(labels[set[1]!] ?? '');
      return set[2] === 'in' ? has : !has;
    }
    const neq = /^([^!=]+)!=(.*)$/.exec(term);
    if (neq) return labels[neq[1]!] !== neq[2];
    const eq = /^([^=]+)==?(.*)$/.exec(term);
    if (!eq) throw new Error(`unsupported selector term ${term}`);
    return labels[eq[1]!] === eq[2];
  });
}

function documentedSelectors(): Array<{ where: string; selector: string }> {
  const sources = {
    'charts/fusion-proxy/README.md': readFileSync(path.join(CHART_DIR, 'README.md'), 'utf8'),
    'charts/fusion-proxy/values.yaml': readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8'),
    'charts/fusion-proxy/templates/NOTES.txt': readFileSync(path.join(CHART_DIR, 'templates/NOTES.txt'), 'utf8'),
  };
  const out: Array<{ where: string; selector: string }> = [];
  for (const [where, text] of Object.entries(sources)) {
    const flat = text.replace(/\n\s*#?\s*/g, ' ');
    for (const m of flat.matchAll(/rollout restart deployment -l\s+('([^']+)'|(\S+))/g)) {
      const selector = (m[2] ?? m[3]!).replace(/`/g, '').replace(/\{\{ \.Release\.Name \}\}|<release>/g, RELEASE);
      out.push({ where, selector });
    }
  }
  return out;
}

it('every documented rollout restart selects the api and worker Deployments, never the bundled Valkey', () => {
  const deployments: K8sObject[] = ofKind(
    render({
      release: RELEASE,
      set: { 'auth.existingSecret': 'mine', 'redis.bundled.enabled': true },
    }).objects,
    'Deployment',
  );
  expect(deployments.map((d) => d.metadata.labels?.['app.kubernetes.io/component']).sort()).toEqual([
    'api',
    'redis',
    'worker',
  ]);
  const selectors = documentedSelectors();
  expect(selectors.length).toBeGreaterThanOrEqual(3);
  for (const { where, selector } of selectors) {
    const chosen = deployments
      .filter((d) => matches(selector, d.metadata.labels ?? {}))
      .map((d) => d.metadata.labels?.['app.kubernetes.io/component'])
      .sort();
    expect({ where, chosen }).toEqual({ where, chosen: ['api', 'worker'] });
  }
});
