import { statusError } from '../../src/proxy-client/proxy-errors';

describe('statusError (messages an operator reads)', () => {
  const ctx = { url: 'https://proxy.example/fusion', type: 'std:account:list', secrets: ['pw-123'] };

  it('joins the server message and the remedy without a doubled period', () => {
    const e = statusError(
      500,
      JSON.stringify({ error: 'Platform API kept answering with HTTP 429. Lower "Requests per second".' }),
      ctx,
    );
    expect(e.message).toContain('Lower "Requests per second". Read the proxy server logs.');
    expect(e.message).not.toContain('..');
  });

  it('a 429 from the password throttle says to correct the password and wait', () => {
    const e = statusError(
      429,
      JSON.stringify({ error: 'too many failed proxy passwords from this address; retry in 60 s' }),
      ctx,
    );
    expect(e.message).toMatch(/Correct the Proxy password, then wait/);
  });

  it('never repeats a secret the server echoed', () => {
    const e = statusError(500, JSON.stringify({ error: 'bad password pw-123' }), ctx);
    expect(e.message).not.toContain('pw-123');
  });
});
