import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { K8sObject } from './helm';

export interface SchemaResult {
  index: number;
  kind: string;
  name: string;
  status: 'valid' | 'invalid' | 'unknown';
  message: string;
}

/**
 * kubernetes-models is ESM-only and needs no cluster; jest runs CommonJS, so validation runs
 * in one child node process for all objects at once.
 */
export function validateAgainstSchemas(objects: K8sObject[]): SchemaResult[] {
  const script = path.join(__dirname, 'validate-manifests.mjs');
  const res = spawnSync(process.execPath, [script], {
    input: JSON.stringify(objects),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`validate-manifests.mjs failed:\n${res.stderr}`);
  return JSON.parse(res.stdout) as SchemaResult[];
}
