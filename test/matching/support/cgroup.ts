/** A fake cgroup tree in a temporary folder, for the CPU and memory limit readers. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const roots: string[] = [];

/** Removes every tree made so far (call in afterAll). */
export function removeCgroups(): void {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
}

/** A cgroup root holding these files (paths relative to it) with these contents. */
export function cgroup(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'cgroup-'));
  roots.push(root);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(root, name, '..'), { recursive: true });
    writeFileSync(join(root, name), `${content}\n`);
  }
  return root;
}
