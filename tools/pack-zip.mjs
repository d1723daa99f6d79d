// npm run pack-zip: the upload package the platform accepts: a zip of exactly `index.js` (the
// connector and every dependency in one file, so the platform needs no node_modules) and
// `connector-spec.json`. esbuild bundles: one binary from npm, a second or two for the whole
// tree, CommonJS output the SDK runtime loads with require().
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { zip } from './zip.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(process.argv[2] ?? join(root, 'dist'));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

const result = await build({
  entryPoints: [join(root, 'src/connector/index.ts')],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  write: false,
  logLevel: 'warning',
  legalComments: 'none',
});
const bundle = Buffer.from(result.outputFiles[0].contents);
const spec = readFileSync(join(root, 'connector-spec.json'));
JSON.parse(spec.toString('utf8')); // a broken spec must fail here, not at upload

mkdirSync(outDir, { recursive: true });
const file = join(outDir, `${pkg.name}-${pkg.version}.zip`);
const archive = zip([
  { name: 'index.js', data: bundle },
  { name: 'connector-spec.json', data: spec },
]);
writeFileSync(file, archive);
console.log(
  `${file}: index.js ${(bundle.length / 1024 / 1024).toFixed(1)} MiB, zip ${(archive.length / 1024 / 1024).toFixed(1)} MiB`,
);
