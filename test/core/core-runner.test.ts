import type { CommandContext } from '../../src/core/command-runner';
import { createCoreRunner } from '../../src/core/core-runner';
import { FusionError } from '../../src/core/errors';

const ctx = { signal: new AbortController().signal } as unknown as CommandContext;

describe('createCoreRunner', () => {
  it('a command missing from the table fails on the first read with COMMAND_NOT_IMPLEMENTED', async () => {
    const run = createCoreRunner({});
    const stream = run('std:account:list', {}, {}, ctx);
    const it = stream[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toMatchObject({ code: 'COMMAND_NOT_IMPLEMENTED' });
    await expect(it.next()).rejects.toBeInstanceOf(FusionError);
    await expect(it.return?.()).resolves.toMatchObject({ done: true });
  });

  it('a command in the table runs with its input, config and context', async () => {
    const run = createCoreRunner({
      'std:test-connection': async function* (input, config, c) {
        yield { input, config, same: c === ctx };
      },
    });
    const out = [];
    for await (const item of run('std:test-connection', { a: 1 }, { b: 2 }, ctx)) out.push(item);
    expect(out).toEqual([{ input: { a: 1 }, config: { b: 2 }, same: true }]);
  });
});
