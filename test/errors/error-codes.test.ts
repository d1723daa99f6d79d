import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConnectorError, ConnectorErrorType } from '@sailpoint/connector-sdk';
import { toConnectorError } from '../../src/connector/connector-errors';
import { FusionError, type FusionErrorCode } from '../../src/core/errors';
import { renderErrorDocs } from '../../src/errors/error-docs';
import { ERROR_CODES, isErrorCode } from '../../src/errors/error-codes';
import { statusError } from '../../src/proxy-client/proxy-errors';

const root = join(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? sourceFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the one error-code table', () => {
  it('docs/errors.md is generated from it and up to date (run `npm run docs:errors`)', () => {
    expect(readFileSync(join(root, 'docs', 'errors.md'), 'utf8')).toBe(renderErrorDocs());
  });

  it('every code the sources raise or name is in the table and in docs/errors.md', () => {
    const docs = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
    const used = new Set<string>();
    for (const file of sourceFiles(join(root, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/FusionError\(\s*'([A-Z_]+)'/g)) used.add(m[1]!);
      for (const m of text.matchAll(/\bcode(?:: ErrorCode)? = '([A-Z_]+)'/g)) used.add(m[1]!);
    }
    expect(used.size).toBeGreaterThan(20);
    const missing = [...used].filter((c) => !isErrorCode(c));
    expect(missing).toEqual([]);
    for (const code of Object.keys(ERROR_CODES)) expect(docs).toContain(`| \`${code}\` |`);
  });

  it('gives every code a status, an SDK type, a meaning and a remedy', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      expect([code, info.status >= 400 && info.status < 600]).toEqual([code, true]);
      expect(['generic', 'notFound']).toContain(info.sdkType);
      expect(info.meaning.length).toBeGreaterThan(10);
      expect(info.remedy.length).toBeGreaterThan(10);
    }
  });

  it('drives the SDK error type the connector gives the platform', () => {
    for (const code of Object.keys(ERROR_CODES).filter((c): c is FusionErrorCode => c !== 'UNEXPECTED')) {
      const e = toConnectorError(new FusionError(code, `failure ${code}`)) as ConnectorError;
      expect(e).toBeInstanceOf(ConnectorError);
      expect([code, e.type]).toEqual([
        code,
        ERROR_CODES[code].sdkType === 'notFound' ? ConnectorErrorType.NotFound : ConnectorErrorType.Generic,
      ]);
      expect(e.message).toBe(`failure ${code}`);
    }
  });

  it('keeps a server code across the proxy: the client raises the same code the server sent', () => {
    const ctx = { url: 'https://proxy.example.com/', type: 'std:account:read', secrets: [] };
    const read = statusError(500, JSON.stringify({ error: 'Account "x" not found', code: 'ACCOUNT_NOT_FOUND' }), ctx);
    expect(read.code).toBe('ACCOUNT_NOT_FOUND');
    expect(read.message).toContain('Account "x" not found');
    expect((toConnectorError(read) as ConnectorError).type).toBe(ConnectorErrorType.NotFound);
    // No code, an unknown code, or a client-side code: the generic server error.
    expect(statusError(500, JSON.stringify({ error: 'boom' }), ctx).code).toBe('PROXY_SERVER_ERROR');
    expect(statusError(500, JSON.stringify({ error: 'boom', code: 'NO_SUCH_CODE' }), ctx).code).toBe(
      'PROXY_SERVER_ERROR',
    );
    expect(statusError(502, JSON.stringify({ error: 'boom', code: 'PROXY_TLS_FAILED' }), ctx).code).toBe(
      'PROXY_SERVER_ERROR',
    );
    expect(statusError(502, '<html>bad gateway</html>', ctx).code).toBe('PROXY_SERVER_ERROR');
  });
});
