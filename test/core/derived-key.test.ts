import { createHash } from 'node:crypto';
import { DerivedKeys } from '../../src/core/aggregation/derived-key';

const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('derived connector keys', () => {
  it('RFC 9562 version 5: the known vector (DNS namespace, "www.example.com")', () => {
    // The RFC's example of a name-based SHA-1 UUID.
    const keys = new DerivedKeys('6ba7b810-9dad-11d1-80b4-00c04fd430c8');
    expect(keys.keyOf('www.example.com')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('one key per account and run: the same again for a partition of the same run, new in the next run', () => {
    const run = new DerivedKeys();
    const retried = new DerivedKeys(run.namespaceId);
    const next = new DerivedKeys();
    const ids = Array.from({ length: 5_000 }, (_, i) => `2c9180${i.toString(16).padStart(26, '0')}`);
    const keys = ids.map((id) => run.keyOf(id));
    for (const k of keys) expect(k).toMatch(UUID_V5);
    expect(new Set(keys).size).toBe(ids.length);
    expect(ids.map((id) => retried.keyOf(id))).toEqual(keys);
    expect(ids.filter((id, i) => next.keyOf(id) === keys[i])).toEqual([]);
    expect(run.namespaceId).not.toBe(next.namespaceId);
  });

  it('the name is hashed as UTF-8 after the namespace bytes', () => {
    const ns = '0f5e6a6e-4b59-4a43-9e55-3f2b0d3c2a11';
    const h = createHash('sha1')
      .update(Buffer.from(ns.replaceAll('-', ''), 'hex'))
      .update('Zoë', 'utf8')
      .digest('hex');
    const key = new DerivedKeys(ns).keyOf('Zoë');
    expect(key.replaceAll('-', '').slice(0, 12)).toBe(h.slice(0, 12));
    expect(key.replaceAll('-', '').slice(20)).toBe(h.slice(20, 32));
  });

  it('a namespace that is not a UUID: a clear error', () => {
    expect(() => new DerivedKeys('run-1')).toThrow('Derived keys need a UUID namespace, not run-1');
  });
});
