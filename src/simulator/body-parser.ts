import { badRequest } from './errors';

/** Minimal multipart/form-data reader: text fields only (the token request and load-accounts send those). */
function parseMultipart(raw: Buffer, contentType: string): Record<string, string> {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw badRequest('multipart/form-data without a boundary');
  const text = raw.toString('latin1');
  const out: Record<string, string> = {};
  for (const part of text.split(`--${boundary}`)) {
    const sep = part.indexOf('\r\n\r\n');
    if (sep < 0) continue;
    const head = part.slice(0, sep);
    const name = /name="([^"]*)"/i.exec(head)?.[1];
    if (name === undefined) continue;
    let value = part.slice(sep + 4);
    if (value.endsWith('\r\n')) value = value.slice(0, -2);
    out[name] = Buffer.from(value, 'latin1').toString('utf8');
  }
  return out;
}

/** Parses a request body by content type; JSON variants (json, json-patch+json, merge-patch+json) as JSON. */
export function parseBody(raw: Buffer, contentType: string | undefined): unknown {
  if (raw.length === 0) return undefined;
  const ct = (contentType ?? '').toLowerCase();
  if (ct.includes('json') || ct === '') {
    try {
      return JSON.parse(raw.toString('utf8'));
    } catch {
      throw badRequest('Request body is not valid JSON');
    }
  }
  if (ct.startsWith('application/x-www-form-urlencoded'))
    return Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  if (ct.startsWith('multipart/form-data')) return parseMultipart(raw, contentType ?? '');
  return raw.toString('utf8');
}
