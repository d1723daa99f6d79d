import { FusionError } from '../errors';

/**
 * RFC 4180 CSV: comma separator, CRLF or LF line ends, fields optionally in double quotes, "" is
 * a quote inside a quoted field, quoted fields may span lines. Empty trailing lines are ignored.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0; // BOM
  let quoted = false;
  let fieldStart = true;
  const endRow = (): void => {
    row.push(field);
    if (!(row.length === 1 && row[0] === '')) rows.push(row);
    row = [];
    field = '';
    fieldStart = true;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
        i++;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new FusionError(
            'INPUT_INVALID',
            `CSV: unexpected character after closing quote on line ${rows.length + 1}`,
          );
        }
        continue;
      }
      field += c;
      i++;
      continue;
    }
    if (c === '"' && fieldStart) {
      quoted = true;
      fieldStart = false;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      fieldStart = true;
      i++;
    } else if (c === '\r' || c === '\n') {
      endRow();
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      field += c;
      fieldStart = false;
      i++;
    }
  }
  if (quoted) throw new FusionError('INPUT_INVALID', 'CSV: a quoted field is not closed');
  if (field !== '' || row.length > 0) endRow();
  return rows;
}
