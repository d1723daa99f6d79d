import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, REPO_ROOT, containerOf, find, render } from './support/helm';

interface Release {
  name: string;
  chartPath: string;
  namespace: string;
  setValueTemplates: Record<string, string>;
}
interface SkaffoldConfig {
  apiVersion: string;
  build: { artifacts: Array<{ image: string }> };
  deploy: { helm: { releases: Release[] } };
  profiles: Array<{
    name: string;
    patches: Array<{ op: string; path: string; value: Record<string, unknown> }>;
    portForward: Array<{ resourceType: string; resourceName: string; namespace: string; port: number }>;
  }>;
}

const config = parse(readFileSync(path.join(REPO_ROOT, 'skaffold.yaml'), 'utf8')) as SkaffoldConfig;
const values = parse(readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const hasValue = (key: string): boolean =>
  key
    .split('.')
    .reduce<unknown>(
      (cur, k) => (cur && typeof cur === 'object' && k in cur ? (cur as Record<string, unknown>)[k] : undefined),
      values,
    ) !== undefined;

describe('skaffold.yaml', () => {
  const release = config.deploy.helm.releases[0]!;
  const dev = config.profiles.find((p) => p.name === 'dev')!;

  it('builds the image and binds it into the chart values', () => {
    expect(config.apiVersion).toMatch(/^skaffold\/v4beta\d+$/);
    const artifact = config.build.artifacts[0]!.image;
    const templateName = artifact.replace(/[/.:-]/g, '_');
    expect(release.setValueTemplates['image.repository']).toBe(`{{.IMAGE_REPO_${templateName}}}`);
    expect(release.setValueTemplates['image.tag']).toContain(`{{.IMAGE_TAG_${templateName}}}`);
    expect(existsSync(path.join(REPO_ROOT, release.chartPath, 'Chart.yaml'))).toBe(true);
    for (const key of Object.keys(release.setValueTemplates)) expect(hasValue(key)).toBe(true);
    // Secrets come from the environment, never from the file.
    expect(release.setValueTemplates['auth.proxyPassword']).toBe('{{default "" .FUSION_PROXY_PASSWORD}}');
  });

  it('the chart accepts what the tag template yields with and without a digest (local builds are not pushed)', () => {
    const image = (tag: string): string => {
      const r = render({
        set: {
          'auth.proxyPassword': 'dev-password-0123456789',
          'redis.bundled.enabled': true,
          'image.registry': '',
          'image.repository': 'fusion-proxy',
        },
        setString: { 'image.tag': tag },
      });
      return containerOf(find(r.objects, 'Deployment', 'fp-fusion-proxy-api')).image;
    };
    const digest = `sha256:${'0'.repeat(64)}`;
    expect(image(`abc123@${digest}`)).toBe(`fusion-proxy:abc123@${digest}`);
    expect(image('abc123@')).toBe('fusion-proxy:abc123');
  });

  it('dev profile enables the bundled Redis and port-forwards the Services the chart really creates', () => {
    const setValues = dev.patches.find((p) => p.path === '/deploy/helm/releases/0/setValues')!.value;
    expect(setValues['redis.bundled.enabled']).toBe(true);
    for (const key of Object.keys(setValues)) expect(hasValue(key)).toBe(true);
    const set = Object.fromEntries(Object.entries(setValues).map(([k, v]) => [k, v as string | number | boolean]));
    const r = render({
      release: release.name,
      namespace: release.namespace,
      set: { ...set, 'auth.proxyPassword': 'dev-password-0123456789' },
    });
    for (const pf of dev.portForward) {
      expect(pf.resourceType).toBe('service');
      expect(pf.namespace).toBe(release.namespace);
      const svc = find(r.objects, 'Service', pf.resourceName) as { spec?: { ports?: Array<{ port: number }> } };
      expect(svc.spec?.ports?.map((p) => p.port)).toContain(pf.port);
    }
    expect(dev.portForward.map((p) => p.resourceName)).toContain('fusion-proxy-api');
  });
});
