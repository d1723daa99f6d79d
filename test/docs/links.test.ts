import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** The README is the front door: short, with the two set-up commands, and no link that leads nowhere. */
const root = path.join(__dirname, '..', '..');

function markdownFiles(): string[] {
  const files = ['README.md', 'src/README.md', 'test/README.md', 'charts/fusion-proxy/README.md'];
  for (const f of readdirSync(path.join(root, 'docs'))) if (f.endsWith('.md')) files.push(`docs/${f}`);
  return files.filter((f) => existsSync(path.join(root, f)));
}

describe('README and docs', () => {
  it('the README is at most 15 KB and keeps exactly the two set-up commands', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(statSync(path.join(root, 'README.md')).size).toBeLessThanOrEqual(15 * 1024);
    const setUp = readme.split(/^## /m).find((s) => s.startsWith('Set up'))!;
    const commands = /```sh\n([\s\S]*?)```/.exec(setUp)![1]!.trim().split('\n');
    expect(commands.map((c) => c.replace(/\s+#.*$/, ''))).toEqual(['npm ci && npm run demo', 'npm test']);
  });

  it('every relative link points at a file or folder that exists', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = m[1]!;
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        const resolved = path.join(root, path.dirname(file), target.split('#')[0]!);
        if (!existsSync(resolved)) broken.push(`${file}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const pages = readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md'));
    expect(pages.filter((p) => !readme.includes(`](docs/${p})`))).toEqual([]);
  });
});
