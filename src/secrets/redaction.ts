/**
 * The one rule for secrets: which keys hold one, which values count as one, and how they are
 * hidden. The logger, the run logger, command errors, the proxy client, the CLI and the simulator
 * all use this module, so a log line, an error and a request log hide the same things the same way.
 */

/** The one placeholder that stands for a hidden secret, wherever it was hidden. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are hidden by key only, never searched for in text: replacing a
 * one-letter password everywhere turns "proxy" into "pro[redacted]y" and hides nothing.
 */
export const MIN_SECRET_LENGTH = 4;

/**
 * From this length a secret is hidden wherever it appears, even inside a longer word (a token
 * glued to other text); shorter ones only where they stand as a whole word.
 */
const ANYWHERE_LENGTH = 16;

/** Key names whose values are secret, in configurations, headers, bodies and query strings. */
const SECRET_KEY = /secret|password|passwd|token|authorization|api[-_]?key|credential/i;

/** Keys the structured logger hides at known depths (pino's redaction works on paths). */
export const SECRET_KEY_NAMES: readonly string[] = [
  'proxyPassword',
  'clientSecret',
  'password',
  'secret',
  'accessToken',
  'access_token',
  'authorization',
  'Authorization',
  'client_secret',
];

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

/**
 * The values worth searching for in text: strings of at least MIN_SECRET_LENGTH, once each,
 * longest first (a secret that contains another is hidden whole).
 */
export function secretValues(values: Iterable<unknown>): string[] {
  const out = new Set<string>();
  for (const v of values) {
    if (typeof v !== 'string' || v.length < MIN_SECRET_LENGTH) continue;
    out.add(v);
    // A secret echoed in a URL or a form body appears percent-encoded.
    const encoded = encodeURIComponent(v);
    if (encoded !== v) out.add(encoded);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** The secret values of a configuration or any flat record: the values of its secret keys. */
export function secretsOf(record: Readonly<Record<string, unknown>>): string[] {
  return secretValues(
    Object.entries(record)
      .filter(([k]) => isSecretKey(k))
      .map(([, v]) => v),
  );
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function pattern(secret: string): RegExp {
  const body = escapeRegExp(secret);
  if (secret.length >= ANYWHERE_LENGTH) return new RegExp(body, 'g');
  // A boundary is needed only where the secret itself starts or ends with a word character.
  const before = /^[A-Za-z0-9_]/.test(secret) ? '(?<![A-Za-z0-9_])' : '';
  const after = /[A-Za-z0-9_]$/.test(secret) ? '(?![A-Za-z0-9_])' : '';
  return new RegExp(`${before}${body}${after}`, 'g');
}

/**
 * `text` with each secret replaced by REDACTED. Applying it twice changes nothing more: text
 * already redacted is left as it is, even when a secret happens to spell part of the placeholder.
 */
export function redactText(text: string, secrets: readonly string[]): string {
  return textRedactor(secrets)(text);
}

/**
 * redactText for one set of secrets, its patterns built once: a command's logger cleans every
 * string of every line with the same secrets (an aggregation writes a line per review form).
 */
export function textRedactor(secrets: readonly string[]): (text: string) => string {
  const usable = secretValues(secrets);
  if (usable.length === 0) return (text) => text;
  // Global patterns are safe to share: replace() starts each search at 0 whatever lastIndex says.
  const patterns = usable.map(pattern);
  return (text) =>
    text === ''
      ? text
      : text
          .split(REDACTED)
          .map((part) => patterns.reduce((acc, re) => acc.replace(re, REDACTED), part))
          .join(REDACTED);
}

/**
 * A copy of `obj` with the values of secret keys replaced, at any depth; errors are reduced to
 * their name and message. For fields about to be written somewhere (a log sink, a request log).
 */
export function redactFields(obj: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (isSecretKey(k)) out[k] = REDACTED;
    else if (v instanceof Error) out[k] = { message: v.message, name: v.name };
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = redactFields(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}
