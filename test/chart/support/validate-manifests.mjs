// Validates Kubernetes objects against the OpenAPI schemas shipped in kubernetes-models (ESM-only,
// hence a separate process). stdin: JSON array of objects; stdout: JSON array of
// { index, kind, name, status: 'valid' | 'invalid' | 'unknown', message }.
import { readFileSync } from 'node:fs';

function modulePath(apiVersion, kind) {
  if (apiVersion.startsWith('monitoring.coreos.com/')) {
    return `@kubernetes-models/prometheus-operator/${apiVersion}/${kind}`;
  }
  return `kubernetes-models/${apiVersion}/${kind}`;
}

const objects = JSON.parse(readFileSync(0, 'utf8'));
const results = [];
for (const [index, obj] of objects.entries()) {
  const base = { index, kind: obj.kind, name: obj.metadata?.name };
  let Model;
  try {
    Model = (await import(modulePath(obj.apiVersion, obj.kind)))[obj.kind];
  } catch {
    Model = undefined;
  }
  if (!Model) {
    results.push({ ...base, status: 'unknown', message: `no schema for ${obj.apiVersion} ${obj.kind}` });
    continue;
  }
  try {
    new Model(obj).validate();
    results.push({ ...base, status: 'valid', message: '' });
  } catch (e) {
    results.push({ ...base, status: 'invalid', message: String(e?.message ?? e) });
  }
}
process.stdout.write(JSON.stringify(results));
