/**
 * Generated hostile requests for the fault suite, written byte for byte to a raw socket so nothing
 * in between (a client library) can clean them up. None carries a working password with a body
 * that could run: whatever the server answers, no command may reach the platform.
 */
import net from 'node:net';
import { randomBytes } from 'node:crypto';

export interface HostileRequest {
  name: string;
  /** Head and body as sent; pieces are written one at a time with `pieceDelayMs` between them. */
  pieces: Buffer[];
  pieceDelayMs?: number;
  /** Loopback source address (the api throttles failed passwords per address). */
  from: string;
}

export interface HostileResponse {
  status: number;
  body: string;
}

const MB = 1024 * 1024;

function head(
  opts: { method?: string; path?: string; contentType?: string | null; length?: number | null; extra?: string[] } = {},
): string {
  const lines = [`${opts.method ?? 'POST'} ${opts.path ?? '/'} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  if (opts.contentType !== null) lines.push(`Content-Type: ${opts.contentType ?? 'application/json'}`);
  if (opts.length !== null && opts.length !== undefined) lines.push(`Content-Length: ${opts.length}`);
  lines.push(...(opts.extra ?? []));
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function post(body: Buffer | string, opts: Parameters<typeof head>[0] = {}): Buffer[] {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  return [Buffer.concat([Buffer.from(head({ length: b.length, ...opts }), 'latin1'), b])];
}

function command(password: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'std:test-connection',
    input: {},
    config: { proxyPassword: password, baseurl: 'http://127.0.0.1:9', clientId: 'x', clientSecret: 'y' },
    ...extra,
  };
}

function nested(depth: number, open: string, close: string): string {
  return open.repeat(depth) + close.repeat(depth);
}

/** Deterministic: the same list on every run. */
export function hostileRequests(password: string): HostileRequest[] {
  const out: HostileRequest[] = [];
  let n = 0;
  // Spread over many loopback addresses: most requests are judged on their content, not throttled.
  const add = (name: string, pieces: Buffer[], from?: string, pieceDelayMs?: number): void => {
    n++;
    out.push({
      name,
      pieces,
      from: from ?? `127.0.${1 + ((n >> 8) & 127)}.${1 + ((n & 255) % 250)}`,
      ...(pieceDelayMs ? { pieceDelayMs } : {}),
    });
  };
  const valid = JSON.stringify(command('wrong-password-000'));

  // Broken JSON.
  for (let i = 1; i < valid.length; i += Math.max(1, Math.floor(valid.length / 60)))
    add(`truncated JSON at ${i}`, post(valid.slice(0, i)));
  for (const junk of [
    '{',
    '}',
    '[',
    'nul',
    'NaN',
    '{"a":1,}',
    "{'type':'x'}",
    '{"type":"std:test-connection"} trailing',
    '\u0000\u0001',
    '\ufeff{}',
    '{"a":"\\ud800"',
    '1e999999',
    '"just a string"',
    '{"a":1}{"b":2}',
    '',
  ]) {
    add(`broken JSON ${JSON.stringify(junk).slice(0, 30)}`, post(junk));
  }
  for (let i = 0; i < 25; i++) add(`random bytes ${i}`, post(randomBytes(64 + i * 97)));
  add(
    'invalid UTF-8 in a string',
    post(Buffer.concat([Buffer.from('{"type":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')])),
  );

  // Wrong types at every level, with a wrong password and with the right one (rejected before any command runs).
  const badValues: unknown[] = [5, -1, 1.5, null, true, [], [1, 2], {}, '', 'x'.repeat(1000), { $gt: '' }];
  for (const v of badValues) {
    add(`type=${JSON.stringify(v).slice(0, 20)}`, post(JSON.stringify(command('wrong', { type: v }))));
    add(
      `type=${JSON.stringify(v).slice(0, 20)} (right password)`,
      post(JSON.stringify(command(password, { type: v }))),
    );
    add(`input=${JSON.stringify(v).slice(0, 20)}`, post(JSON.stringify(command('wrong', { input: v }))));
    add(
      `config=${JSON.stringify(v).slice(0, 20)}`,
      post(JSON.stringify({ type: 'std:test-connection', input: {}, config: v })),
    );
    add(`proxyPassword=${JSON.stringify(v).slice(0, 20)}`, post(JSON.stringify(command(v))));
    add(`body=${JSON.stringify(v).slice(0, 20)}`, post(JSON.stringify(v)));
  }
  for (const type of [
    'std:account:list ',
    'STD:ACCOUNT:LIST',
    'std:unknown',
    'std:account:list\u0000',
    '__proto__',
    'constructor',
    'toString',
  ]) {
    add(`unknown type ${JSON.stringify(type)} (right password)`, post(JSON.stringify(command(password, { type }))));
  }

  // Huge strings and arrays (under the 10 MB limit, so they are parsed).
  for (let i = 0; i < 6; i++)
    add(
      `huge string ${i}`,
      post(JSON.stringify(command(`wrong-${i}`, { input: { identity: 'x'.repeat(9 * MB - 1000) } }))),
    );
  for (let i = 0; i < 4; i++)
    add(`huge type string ${i}`, post(JSON.stringify(command('wrong', { type: 'y'.repeat(8 * MB) }))));
  for (let i = 0; i < 6; i++)
    add(
      `huge array ${i}`,
      post(`{"type":"std:test-connection","input":{"a":[${'0,'.repeat(4 * MB)}0]},"config":{"proxyPassword":"wrong"}}`),
    );
  for (let i = 0; i < 4; i++)
    add(
      `many keys ${i}`,
      post(
        `{"config":{"proxyPassword":"w"},"input":{${Array.from({ length: 200_000 }, (_, k) => `"k${k}":${k}`).join(',')}}}`,
      ),
    );

  // Deep nesting.
  for (const depth of [1_000, 10_000, 100_000, 1_000_000, 4_000_000]) {
    add(
      `nested arrays ${depth}`,
      post(
        `{"type":"std:test-connection","input":{"a":${nested(depth, '[', ']')}},"config":{"proxyPassword":"wrong"}}`,
      ),
    );
    add(`nested objects ${depth}`, post(`{"input":${nested(depth, '{"a":', '}').replace(/\{"a":\}/, '{}')}}`));
    add(`unterminated nesting ${depth}`, post('['.repeat(depth)));
  }

  // Prototype pollution.
  const pollution = [
    '{"__proto__":{"polluted":true},"type":"std:test-connection","config":{"proxyPassword":"P"}}',
    '{"type":"std:test-connection","input":{"__proto__":{"isAdmin":true}},"config":{"proxyPassword":"P"}}',
    '{"type":"std:test-connection","config":{"__proto__":{"proxyPassword":"P"}}}',
    '{"type":"std:test-connection","config":{"proxyPassword":"P","constructor":{"prototype":{"polluted":true}}}}',
    '{"constructor":{"prototype":{"polluted":true}},"config":{"proxyPassword":"P"}}',
    '{"type":"std:test-connection","input":{"a":{"b":{"__proto__":{"x":1}}}},"config":{"proxyPassword":"P"}}',

    '{"type":"std:test-connection","config":{"proxyPassword":"P","matching":{"attributes":[{"__proto__":{"mandatory":true}}]}}}',
    '{"type":"std:test-connection","config":{"proxyPassword":"P","\\u005f_proto__":{"x":1}}}',
  ];
  // "__proto__" as a value is no pollution: with the right password that body is an ordinary command.
  for (let i = 0; i < 6; i++)
    add(
      `"__proto__" as a value ${i}`,
      post('{"type":"std:test-connection","config":{"proxyPassword":"wrong","sources":["__proto__"]}}'),
    );
  for (const p of pollution) {
    // With the right password only where the key is literal (refused while parsing): an escaped
    // "\u005f_proto__" parses as a plain own key, so that body is an ordinary command that would run.
    for (const pw of p.includes('\\u005f') ? ['wrong'] : ['wrong', password]) {
      for (let i = 0; i < 3; i++)
        add(
          `prototype pollution (${pw === password ? 'right' : 'wrong'} password) ${i}`,
          post(p.replace(/"P"/g, JSON.stringify(pw))),
        );
    }
  }

  // Wrong content types and encodings.
  const types = [
    null,
    'text/plain',
    'application/xml',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    'application/jsonx',
    'json',
    '*/*',
    'application/octet-stream',
    'text/html',
    'application/json; charset=utf-16',
    'image/png',
  ];
  for (const t of types) {
    for (let i = 0; i < 4; i++) add(`content-type ${t}`, post(valid, { contentType: t }));
  }
  for (const enc of ['gzip', 'deflate', 'br', 'x-unknown']) {
    for (let i = 0; i < 3; i++)
      add(`content-encoding ${enc}`, post(randomBytes(200), { extra: [`Content-Encoding: ${enc}`] }));
  }

  // Slow bodies (they finish: the server must still answer them).
  for (let i = 0; i < 8; i++) {
    const body = Buffer.from(JSON.stringify(command(`slow-${i}`, { input: { pad: 'p'.repeat(2000) } })));
    const pieces = [Buffer.from(head({ length: body.length }), 'latin1')];
    for (let k = 0; k < body.length; k += 200) pieces.push(body.subarray(k, k + 200));
    add(`slow body ${i}`, pieces, undefined, 100);
  }

  // Oversized bodies: declared, chunked, and behind Expect: 100-continue.
  const big = Buffer.alloc(11 * MB, 0x20);
  for (let i = 0; i < 3; i++) add(`oversized body ${i}`, [Buffer.from(head({ length: big.length }), 'latin1'), big]);
  for (let i = 0; i < 3; i++)
    add(`oversized declared, Expect: 100-continue ${i}`, [
      Buffer.from(head({ length: 64 * MB, extra: ['Expect: 100-continue'] }), 'latin1'),
    ]);
  for (let i = 0; i < 3; i++) {
    const chunks: Buffer[] = [Buffer.from(head({ length: null, extra: ['Transfer-Encoding: chunked'] }), 'latin1')];
    for (let k = 0; k < 11; k++)
      chunks.push(Buffer.concat([Buffer.from(`${MB.toString(16)}\r\n`), Buffer.alloc(MB, 0x20), Buffer.from('\r\n')]));
    chunks.push(Buffer.from('0\r\n\r\n'));
    add(`oversized chunked ${i}`, chunks);
  }

  // Header abuse and malformed requests.
  for (let i = 0; i < 5; i++) add(`20 KB header ${i}`, post(valid, { extra: [`X-Big: ${'h'.repeat(20_000)}`] }));
  for (let i = 0; i < 5; i++)
    add(`500 headers ${i}`, post(valid, { extra: Array.from({ length: 500 }, (_, k) => `X-H${k}: v`) }));
  for (let i = 0; i < 5; i++)
    add(`conflicting Content-Length ${i}`, [
      Buffer.from(`${head({ length: 10, extra: ['Content-Length: 20'] })}{"a":1}   `, 'latin1'),
    ]);
  for (let i = 0; i < 5; i++)
    add(`Content-Length with Transfer-Encoding ${i}`, [
      Buffer.from(`${head({ length: 5, extra: ['Transfer-Encoding: chunked'] })}0\r\n\r\n`, 'latin1'),
    ]);
  for (let i = 0; i < 5; i++) add(`negative Content-Length ${i}`, [Buffer.from(head({ length: -1 }), 'latin1')]);
  for (let i = 0; i < 5; i++)
    add(`non-numeric Content-Length ${i}`, [Buffer.from(head({ extra: ['Content-Length: abc'] }), 'latin1')]);
  for (let i = 0; i < 5; i++) add(`control characters in a header ${i}`, post(valid, { extra: ['X-Bad: a\u0001b'] }));
  for (let i = 0; i < 5; i++) add(`header without a colon ${i}`, post(valid, { extra: ['NoColonHere'] }));
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'BREW', 'TRACE'])
    add(`method ${method}`, post(valid, { method }));
  for (const path of [
    '/../../etc/passwd',
    '/%2e%2e/%2e%2e',
    '/%00',
    `/${'a'.repeat(8000)}`,
    '/proxy?x=1',
    '/metrics/../',
    '//',
    '/\u00e9',
  ])
    add(`path ${path.slice(0, 20)}`, post(valid, { path }));
  for (let i = 0; i < 5; i++)
    add(`request line garbage ${i}`, [
      Buffer.from(`POST / HTTP/9.9\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}`, 'latin1'),
    ]);
  for (let i = 0; i < 5; i++)
    add(`Host header missing ${i}`, [
      Buffer.from(
        `POST / HTTP/1.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${valid.length}\r\n\r\n${valid}`,
        'latin1',
      ),
    ]);

  // Password guesses from one address (the throttle's case) and from many.
  const guesses = [
    '',
    ' ',
    password.slice(0, -1),
    password + ' ',
    password.toUpperCase(),
    ` ${password}`,
    `${password}\n`,
    'admin',
    'password',
    'null',
  ];
  for (let i = 0; i < 300; i++) {
    const guess = i < guesses.length ? guesses[i]! : randomBytes(1 + (i % 40)).toString('base64');
    add(`password guess ${i} (one address)`, post(JSON.stringify(command(guess))), '127.0.0.99');
  }
  for (let i = 0; i < 300; i++)
    add(`password guess ${i} (many addresses)`, post(JSON.stringify(command(randomBytes(24).toString('hex')))));
  return out;
}

/** Sends one request over a raw socket and reads the answer (status and body) until the server closes. */
export function sendHostile(port: number, r: HostileRequest): Promise<HostileResponse> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: r.from });
    const received: Buffer[] = [];
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(guard);
      socket.destroy();
      resolve(parse(Buffer.concat(received)));
    };
    const guard = setTimeout(finish, 120_000);
    socket.on('data', (d: Buffer) => received.push(d));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      void (async () => {
        for (const piece of r.pieces) {
          if (socket.destroyed) return;
          const ok = socket.write(piece);
          if (!ok) await new Promise<void>((res) => socket.once('drain', res).once('close', res));
          if (r.pieceDelayMs) await new Promise((res) => setTimeout(res, r.pieceDelayMs));
        }
      })();
    });
  });
}

function parse(raw: Buffer): HostileResponse {
  const text = raw.toString('utf8');
  const headEnd = text.indexOf('\r\n\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
  if (headEnd < 0) return { status, body: '' };
  const headers = text.slice(0, headEnd).toLowerCase();
  let body = text.slice(headEnd + 4);
  if (/\r\ntransfer-encoding: chunked/.test(headers)) {
    let out = '';
    let rest = body;
    for (;;) {
      const lineEnd = rest.indexOf('\r\n');
      const size = parseInt(rest.slice(0, lineEnd), 16);
      if (!(size > 0)) break;
      out += rest.slice(lineEnd + 2, lineEnd + 2 + size);
      rest = rest.slice(lineEnd + 2 + size + 2);
    }
    body = out;
  }
  return { status, body };
}
