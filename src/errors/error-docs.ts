import { ERROR_CODES, keepsStatus, type ErrorCode } from './error-codes';

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** docs/errors.md, generated from the table so the page can never drift from the code. */
export function renderErrorDocs(): string {
  const codes = Object.keys(ERROR_CODES).sort() as ErrorCode[];
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from src/errors/error-codes.ts by `npm run docs:errors`; a test fails when this page is stale. -->',
    '',
    'Every deliberate failure carries a stable code. The proxy server answers an error before the first byte as',
    '`{"error": "<message>", "code": "<CODE>"}` with the HTTP status below (a command that failed while it ran answers',
    '`500` unless the code is marked "always": a transport code, or a request that is itself wrong); the proxy client reads `code` back, so the connector gives the platform',
    'the same error type in direct and proxy-client mode. **SDK type** is the `ConnectorErrorType` the platform receives.',
    '**Retry** says whether running the same command again, unchanged, may succeed.',
    '',
    '| Code | HTTP | SDK type | Retry | Raised by | Meaning | What to do |',
    '|---|---|---|---|---|---|---|',
    ...codes.map((code) => {
      const c = ERROR_CODES[code];
      const status = keepsStatus(code) ? `${c.status} (always)` : String(c.status);
      return `| \`${code}\` | ${status} | ${c.sdkType} | ${c.retryable ? 'yes' : 'no'} | ${c.origin} | ${cell(c.meaning)} | ${cell(c.remedy)} |`;
    }),
    '',
  ];
  return lines.join('\n');
}
