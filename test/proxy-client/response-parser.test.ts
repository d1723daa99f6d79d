import { ResponseFormatError, ResponseParser, type ParseEvent } from '../../src/proxy-client/response-parser';

/** Deterministic PRNG so chunk boundaries are "odd" but reproducible. */
function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function feed(parser: ResponseParser, body: Buffer, nextSize: () => number): ParseEvent[] {
  const out: ParseEvent[] = [];
  for (let i = 0; i < body.length;) {
    const n = Math.max(1, nextSize());
    out.push(...parser.push(body.subarray(i, i + n)));
    parser.assertOk();
    i += n;
  }
  out.push(...parser.end());
  return out;
}

const items = (evs: ParseEvent[]): unknown[] =>
  evs.filter((e) => e.kind === 'item').map((e) => (e as { item: unknown }).item);
const heartbeats = (evs: ParseEvent[]): number => evs.filter((e) => e.kind === 'heartbeat').length;

function parseAll(body: string | Buffer, contentType?: string, chunk = 1): ParseEvent[] {
  return feed(
    new ResponseParser({ contentType }),
    Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    () => chunk,
  );
}

function failure(fn: () => unknown): ResponseFormatError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ResponseFormatError) return e;
    throw e;
  }
  throw new Error('expected a ResponseFormatError');
}

const TRICKY = [
  { id: 'a', s: 'brackets ] } [ { inside', q: 'escaped \\"quote\\" and \\\\' },
  { id: 'b', s: 'ends with backslash \\', n: 'line1\nline2\r\n\ttab', nested: { arr: [1, [2, { x: ']' }]], e: {} } },
  { id: 'c', u: 'héllo wörld — 日本語 😀🎉', esc: '\u2028\u0000\u001f', comma: ',,,' },
  { id: 'd', empty: '', nums: [-1.5e10, 0, 3], t: true, f: false, z: null },
];

describe('ResponseParser: JSON array', () => {
  it.each([1, 2, 3, 7, 64])('parses tricky strings and nesting fed in %i-byte chunks', (chunk) => {
    const body = `  [\n ${TRICKY.map((o) => JSON.stringify(o)).join(' ,\n')} ]  \n`;
    expect(items(parseAll(body, 'application/json', chunk))).toEqual(TRICKY);
  });

  it('parses a multi-MB array fed in random odd chunk sizes, with unicode split across chunks', () => {
    const rnd = prng(42);
    const expected = Array.from({ length: 20_000 }, (_, i) => ({
      key: { simple: { id: `u${i}` } },
      attributes: { name: `Zoë ${i} 😀 "q" [x] {y}`, note: 'x'.repeat(i % 200), groups: ['a', `g\\${i}`] },
    }));
    const body = Buffer.from(JSON.stringify(expected), 'utf8');
    expect(body.length).toBeGreaterThan(3_000_000);
    const out = feed(new ResponseParser({ contentType: 'application/json' }), body, () => 1 + Math.floor(rnd() * 5000));
    expect(items(out)).toEqual(expected);
  });

  it('handles strings dense with escapes (escaped quotes and backslashes) at any chunk boundary', () => {
    const rnd = prng(7);
    const dense = Array.from({ length: 300 }, (_, i) => ({
      i,
      s: '\\"\n\\\\"'.repeat(i % 17) + '"]}'.repeat(i % 5),
      t: '\\'.repeat(i % 4),
    }));
    const body = Buffer.from(JSON.stringify(dense), 'utf8');
    for (let round = 0; round < 5; round++) {
      expect(items(feed(new ResponseParser(), body, () => 1 + Math.floor(rnd() * 40)))).toEqual(dense);
    }
    // One 2 MB string of escapes: must parse in linear time (a quadratic scan would not finish).
    const big = [{ s: '\n"'.repeat(500_000) }];
    expect(items(feed(new ResponseParser(), Buffer.from(JSON.stringify(big)), () => 65536))).toEqual(big);
  });

  it('accepts an empty array as an empty result', () => {
    expect(parseAll('[]')).toEqual([]);
    expect(parseAll(' [ \n ] ')).toEqual([]);
  });

  it('emits each item as soon as its closing brace arrives, before the array ends', () => {
    const p = new ResponseParser();
    expect(p.push(Buffer.from('[{"a":1}'))).toEqual([{ kind: 'item', item: { a: 1 } }]);
    expect(p.push(Buffer.from(',{"b":'))).toEqual([]);
    expect(p.push(Buffer.from('2}]'))).toEqual([{ kind: 'item', item: { b: 2 } }]);
    expect(p.end()).toEqual([]);
  });

  it('fails as truncated when the closing bracket never comes', () => {
    const e1 = failure(() => parseAll('[{"a":1},{"b":2}'));
    expect(e1.kind).toBe('truncated');
    expect(e1.message).toMatch(/without its closing bracket after 2 complete item/);
    expect(failure(() => parseAll('[{"a":1},{"b":"unfinished')).kind).toBe('truncated');
    expect(failure(() => parseAll('[{"a":1},')).kind).toBe('truncated');
  });

  it('rejects non-objects, trailing commas, missing commas and trailing garbage', () => {
    expect(failure(() => parseAll('[1,2]')).message).toMatch(
      /item 1 of the JSON array starts with "1", not a JSON object/,
    );
    expect(failure(() => parseAll('[{"a":1},]')).message).toMatch(/trailing comma/);
    expect(failure(() => parseAll('[{"a":1} {"b":2}]')).message).toMatch(/expected "," or "]" after item 1/);
    expect(failure(() => parseAll('[{"a":1}] x')).message).toMatch(/after the end of the JSON array/);
    expect(failure(() => parseAll('[{"a":1,}]')).message).toMatch(/item 1 of the JSON array is not valid JSON/);
  });

  it('rejects items wrapped in a data field', () => {
    const e = failure(() => parseAll('[{"data":{"id":1},"type":"output"}]'));
    expect(e.kind).toBe('invalid');
    expect(e.message).toMatch(/"data" field/);
  });

  it('enforces the item size bound', () => {
    const p = new ResponseParser({ maxItemBytes: 100 });
    const e = failure(() => feed(p, Buffer.from(`[{"a":"${'x'.repeat(200)}"}]`), () => 10));
    expect(e.message).toMatch(/larger than 100 bytes/);
  });
});

describe('ResponseParser: NDJSON', () => {
  const ND = 'application/x-ndjson; charset=utf-8';

  it('parses lines in 1-byte chunks; blank lines are heartbeats; CRLF is accepted', () => {
    const body = `\n${JSON.stringify(TRICKY[0])}\r\n\n   \n${JSON.stringify(TRICKY[2])}\n${JSON.stringify(TRICKY[1])}\n`;
    const out = parseAll(body, ND, 1);
    expect(items(out)).toEqual([TRICKY[0], TRICKY[2], TRICKY[1]]);
    expect(heartbeats(out)).toBe(3);
  });

  it('accepts a single object when the server declares NDJSON (test connection)', () => {
    expect(items(parseAll('{"status":"ok"}\n', ND))).toEqual([{ status: 'ok' }]);
    expect(items(parseAll('{"status":"ok"}', ND))).toEqual([{ status: 'ok' }]);
  });

  it('accepts NDJSON without a declared content type once a second line proves the format, in order', () => {
    const p = new ResponseParser({ contentType: 'application/json' });
    expect(p.push(Buffer.from('{"a":1}\n'))).toEqual([]);
    expect(p.push(Buffer.from('{"b":2}\n'))).toEqual([
      { kind: 'item', item: { a: 1 } },
      { kind: 'item', item: { b: 2 } },
    ]);
    expect(p.push(Buffer.from('{"c":3}\n'))).toEqual([{ kind: 'item', item: { c: 3 } }]);
    expect(p.end()).toEqual([]);
  });

  it('accepts a last line without a newline when it parses', () => {
    expect(items(parseAll('{"a":1}\n{"b":2}', ND))).toEqual([{ a: 1 }, { b: 2 }]);
  });

  it('fails as truncated when the last line has no newline and does not parse', () => {
    const e = failure(() => parseAll('{"a":1}\n{"b":', ND));
    expect(e.kind).toBe('truncated');
    expect(e.message).toMatch(/middle of line 2/);
  });

  it('reports a bad line after the items that precede it in the same chunk', () => {
    const p = new ResponseParser({ contentType: ND });
    expect(p.push(Buffer.from('{"a":1}\nnot json\n{"b":2}\n'))).toEqual([{ kind: 'item', item: { a: 1 } }]);
    expect(() => p.assertOk()).toThrow(/line 2 is not valid JSON/);
    expect(() => p.push(Buffer.from('{"c":3}\n'))).toThrow(/line 2 is not valid JSON/);
    expect(() => p.end()).toThrow(/line 2 is not valid JSON/);
  });

  it('rejects a bad line with its line number', () => {
    const e = failure(() => parseAll('{"a":1}\ngeneric error: \n', ND));
    expect(e.kind).toBe('invalid');
    expect(e.message).toMatch(/line 2 is not valid JSON/);
  });

  it('rejects non-object lines and spcx envelopes', () => {
    expect(failure(() => parseAll('{"a":1}\n42\n', ND)).message).toMatch(/line 2 is a number, not a JSON object/);
    expect(failure(() => parseAll('{"a":1}\n[{"a":1}]\n', ND)).message).toMatch(/line 2 is an array/);
    expect(failure(() => parseAll('{"data":{"id":"u1"},"type":"output"}\n', ND)).message).toMatch(/"data" field/);
  });

  it('empty and whitespace-only bodies are empty results (heartbeats only)', () => {
    expect(parseAll('', ND)).toEqual([]);
    const out = parseAll('\n\n  \n', 'application/json');
    expect(items(out)).toEqual([]);
    expect(heartbeats(out)).toBe(3);
  });

  it('skips a UTF-8 byte order mark', () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('[{"a":1}]')]);
    expect(items(feed(new ResponseParser(), body, () => 64))).toEqual([{ a: 1 }]);
  });
});

describe("ResponseParser: the spec's invalid responses", () => {
  it('rejects a single bare object', () => {
    const e = failure(() => parseAll('{"id":"u1","attributes":{}}', 'application/json'));
    expect(e.kind).toBe('invalid');
    expect(e.message).toMatch(/single bare JSON object/);
    expect(failure(() => parseAll('{"id":"u1"}\n')).message).toMatch(/single bare JSON object/);
  });

  it('rejects a pretty-printed bare object, whatever the content type', () => {
    const body = JSON.stringify({ id: 'u1', attributes: { a: 1 } }, null, 2);
    expect(failure(() => parseAll(body, 'application/json', 5)).message).toMatch(/line 1 is not valid JSON/);
    expect(failure(() => parseAll(body, 'application/x-ndjson', 5)).message).toMatch(/line 1 is not valid JSON/);
  });

  it('rejects a {data: [...]} wrapper, compact or pretty-printed', () => {
    const wrapped = { data: [{ id: 'u1' }, { id: 'u2' }] };
    expect(failure(() => parseAll(JSON.stringify(wrapped), 'application/json')).message).toMatch(/"data" field/);
    expect(failure(() => parseAll(JSON.stringify(wrapped), 'application/x-ndjson')).message).toMatch(/"data" field/);
    expect(failure(() => parseAll(JSON.stringify(wrapped, null, 2))).kind).toBe('invalid');
  });

  it('rejects an HTML error page with a quote of its start', () => {
    const e = failure(() => parseAll('<html><body>Bad gateway</body></html>', 'text/html'));
    expect(e.message).toMatch(/starts with "<"/);
  });
});
