/**
 * #28 item 17: without Chromium the report tests failed with `spawn /usr/bin/chromium EACCES` and
 * no hint. The helper names what is missing and how to install it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumBinary } from './match-cli';

it('a missing Chromium is named, with the package to install', () => {
  expect(() => chromiumBinary('/nonexistent/chromium')).toThrow(
    /^headless Chromium is not installed at \/nonexistent\/chromium: .* apt-get install -y chromium/,
  );
});

it('a file that cannot be run is named too', () => {
  const dir = mkdtempSync(join(tmpdir(), 'chromium-hint-'));
  const file = join(dir, 'chromium');
  writeFileSync(file, 'not a program', { mode: 0o644 });
  try {
    expect(() => chromiumBinary(file)).toThrow(/^headless Chromium cannot be run at \/.*\/chromium: /);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
