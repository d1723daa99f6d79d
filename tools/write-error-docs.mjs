// Regenerates docs/errors.md from the error-code table (needs `npm run build` first; `npm run docs:errors` does both).
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const { renderErrorDocs } = require('../dist/errors/error-docs.js');
writeFileSync(new URL('../docs/errors.md', import.meta.url), renderErrorDocs());
console.log('wrote docs/errors.md');
