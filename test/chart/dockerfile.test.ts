import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, REPO_ROOT } from './support/helm';

/**
 * No Docker engine in CI: .ci/run proves the build stage's commands by running them outside
 * Docker; this test keeps the Dockerfile's stages in step with those commands and the chart.
 */
interface Instruction {
  op: string;
  args: string;
}
interface Stage {
  from: string;
  name: string;
  instructions: Instruction[];
}

function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op = '', rest = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const upper = op.toUpperCase();
    if (upper === 'FROM') {
      const [, image = '', name = ''] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest) ?? [];
      const resolved = image.replace(
        /\$\{(\w+)\}|\$(\w+)/g,
        (_m, a: string | undefined, b: string | undefined) => args.get((a ?? b)!) ?? '',
      );
      stages.push({ from: resolved, name: name || String(stages.length), instructions: [] });
    } else if (upper === 'ARG' && stages.length === 0) {
      const [, k = '', v = ''] = /^(\w+)=?(.*)$/.exec(rest) ?? [];
      args.set(k, v);
    } else {
      stages.at(-1)?.instructions.push({ op: upper, args: rest });
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
const stage = (name: string): Stage => {
  const s = dockerfile.stages.find((x) => x.name === name);
  if (!s) throw new Error(`Dockerfile has no stage "${name}"`);
  return s;
};
const runs = (s: Stage): string[] => s.instructions.filter((i) => i.op === 'RUN').map((i) => i.args);
const finalStage = dockerfile.stages.at(-1)!;
const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};
const ciRun = readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8');

describe('Dockerfile', () => {
  it('uses node:20 bookworm-slim pinned by tag in every stage', () => {
    expect(dockerfile.stages.length).toBeGreaterThanOrEqual(3);
    for (const s of dockerfile.stages)
      expect(s.from).toMatch(/^node:20\.\d+\.\d+-bookworm-slim(@sha256:[0-9a-f]{64})?$/);
  });

  it('build stage runs the same install and build commands as .ci/run', () => {
    expect(ciRun).toMatch(/^npm ci\b/m);
    expect(ciRun).toMatch(/^npm run build$/m);
    // ...then runs the final stage's files outside Docker (.ci/runtime-stage-check.mjs) before the tests.
    expect(ciRun).toMatch(/^npm run build\n(?:#.*\n)*node \.ci\/runtime-stage-check\.mjs$/m);
    const build = runs(stage('build'));
    expect(build.some((r) => /^npm ci\b/.test(r) && !r.includes('--omit=dev'))).toBe(true);
    expect(build).toContain('npm run build');
    expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
    // Everything the build script reads is copied in before it runs.
    const copied = stage('build')
      .instructions.filter((i) => i.op === 'COPY')
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    for (const f of ['package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json', 'src']) {
      expect(copied).toContain(f);
      expect(existsSync(path.join(REPO_ROOT, f))).toBe(true);
    }
  });

  it('final stage: production dependencies only, the build output, a numeric non-root user matching the chart', () => {
    const copies = finalStage.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    const nodeModules = copies.find((c) => /\bnode_modules\b/.test(c));
    const [, fromStage = ''] = /--from=(\S+)/.exec(nodeModules ?? '') ?? [];
    expect(runs(stage(fromStage)).some((r) => /npm ci\b.*--omit=dev/.test(r))).toBe(true);
    expect(copies.some((c) => /--from=build\s+\/app\/dist\b/.test(c))).toBe(true);
    expect(copies.some((c) => /--from=build\s+\S*node_modules/.test(c))).toBe(false);
    expect(copies.some((c) => /^\.\s|^\.\/?\s/.test(c))).toBe(false);

    const users = finalStage.instructions.filter((i) => i.op === 'USER').map((i) => i.args);
    expect(users).toHaveLength(1);
    const [uid, gid] = users[0]!.split(':').map(Number);
    expect(Number.isInteger(uid) && uid! > 0).toBe(true);
    const values = parse(readFileSync(path.join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<
      string,
      { containerSecurityContext: { runAsUser: number; runAsGroup: number } }
    >;
    for (const c of ['api', 'worker']) {
      expect(values[c]!.containerSecurityContext.runAsUser).toBe(uid);
      expect(values[c]!.containerSecurityContext.runAsGroup).toBe(gid);
    }
  });

  it('runs `node dist/cli/main.js serve` (the start script) under tini and the heap-limit script, in exec form', () => {
    const entry = finalStage.instructions.find((i) => i.op === 'ENTRYPOINT')!;
    const cmd = finalStage.instructions.find((i) => i.op === 'CMD')!;
    const argv = [...(JSON.parse(entry.args) as string[]), ...(JSON.parse(cmd.args) as string[])];
    expect(argv[0]).toBe('/usr/bin/tini');
    expect(argv.slice(argv.indexOf('node')).join(' ')).toBe(pkg.scripts.start);
    // tini runs node through the heap-limit script (test/chart/heap-limit.test.ts), which the image holds.
    expect(argv.slice(argv.indexOf('--') + 1, argv.indexOf('node'))).toEqual(['bin/heap-limit.sh']);
    const copies = finalStage.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    expect(copies).toContain('bin/heap-limit.sh ./bin/');
    expect(finalStage.instructions.find((i) => i.op === 'WORKDIR')?.args).toBe('/app');
    expect(runs(finalStage).some((r) => /apt-get install .*\btini\b/.test(r))).toBe(true);
    expect(finalStage.instructions.some((i) => i.op === 'ENV' && /NODE_ENV=production/.test(i.args))).toBe(true);
  });

  it('.dockerignore keeps secrets, git, dependencies and dev files out of the context', () => {
    const ignore = readFileSync(path.join(REPO_ROOT, '.dockerignore'), 'utf8')
      .split(/\r?\n/)
      .map((l) => l.trim());
    for (const p of [
      '**/node_modules',
      'dist',
      '.git',
      '.env',
      '.env.*',
      '.npmrc',
      'test',
      'bench',
      'charts',
      'coverage',
    ])
      expect(ignore).toContain(p);
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json'])
      expect(ignore).not.toContain(needed);
  });
});
