/**
 * #28 item 13: a Markdown table that a renderer shows broken (a row with a cell too many, a
 * paragraph glued to the last row) reads as garbage on GitHub and Artifact Hub. Every table of the
 * READMEs and docs/ has as many cells in each row as in its header and ends before a blank line.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..');
const files = [
  'README.md',
  'src/README.md',
  'test/README.md',
  'charts/fusion-proxy/README.md',
  ...readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** Cells of a table row: pipes split cells, except escaped ones and those inside `code`. */
function cells(row: string): number {
  let n = 0;
  let code = false;
  for (let i = 0; i < row.length; i++) {
    const ch = row[i];
    if (ch === '`') code = !code;
    else if (ch === '|' && !code && row[i - 1] !== '\\') n++;
  }
  return n - 1;
}

function problems(file: string): string[] {
  const lines = readFileSync(path.join(root, file), 'utf8').split('\n');
  const out: string[] = [];
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fence = !fence;
    if (fence || !lines[i]!.startsWith('|') || (i > 0 && lines[i - 1]!.startsWith('|'))) continue;
    const width = cells(lines[i]!);
    let j = i;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++)
      if (cells(lines[j]!) !== width) out.push(`${file}:${j + 1}: ${cells(lines[j]!)} cells, the header has ${width}`);
    if (j < lines.length && lines[j]!.trim() !== '') out.push(`${file}:${j + 1}: text glued to the table above`);
  }
  return out;
}

it('every Markdown table is well formed', () => {
  expect(files.flatMap(problems)).toEqual([]);
});
