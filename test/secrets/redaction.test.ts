import {
  MIN_SECRET_LENGTH,
  REDACTED,
  isSecretKey,
  redactFields,
  redactText,
  secretValues,
  secretsOf,
  textRedactor,
} from '../../src/secrets/redaction';

describe('secret redaction: one rule for every layer', () => {
  it('hides a secret where it stands as a word, with the one placeholder', () => {
    expect(redactText('login failed for s3cr3t-pw (retry)', ['s3cr3t-pw'])).toBe(
      `login failed for ${REDACTED} (retry)`,
    );
    expect(redactText('url https://u:hunter22@host/', ['hunter22'])).toBe(`url https://u:${REDACTED}@host/`);
  });

  it('never cuts a word: a short secret inside a longer word is left alone', () => {
    expect(redactText('the proxy answered', ['rox1'])).toBe('the proxy answered');
    expect(redactText('proxy at proxy-host', ['prox'])).toBe('proxy at proxy-host');
    expect(redactText('prox is the password', ['prox'])).toBe(`${REDACTED} is the password`);
  });

  it('values shorter than the minimum are never searched for in text', () => {
    const short = 'x'.repeat(MIN_SECRET_LENGTH - 1);
    expect(redactText(`proxy ${short} proxy`, [short])).toBe(`proxy ${short} proxy`);
    expect(secretValues(['x', 'ab', short, undefined, 7])).toEqual([]);
  });

  it('a long secret is hidden even when glued to other text', () => {
    const token = 'AbCdEfGhIjKlMnOpQrSt';
    expect(redactText(`Bearer${token}xyz`, [token])).toBe(`Bearer${REDACTED}xyz`);
  });

  it('hides the percent-encoded form too, and the longest secret first', () => {
    expect(redactText('client_secret=p%40ss%2Fword&x=1', ['p@ss/word'])).toBe(`client_secret=${REDACTED}&x=1`);
    expect(redactText('abcd-efgh and abcd', ['abcd', 'abcd-efgh'])).toBe(`${REDACTED} and ${REDACTED}`);
  });

  it('is idempotent, even for a secret that spells part of the placeholder', () => {
    const once = redactText('redacted value: redacted', ['redacted']);
    expect(once).toBe(`${REDACTED} value: ${REDACTED}`);
    expect(redactText(once, ['redacted'])).toBe(once);
  });

  it('a redactor built once hides the same as redactText, call after call (its patterns keep no state)', () => {
    const secrets = ['s3cr3t-pw', 'a-very-long-client-secret-value', 'hunter22'];
    const clean = textRedactor(secrets);
    const texts = [
      'login failed for s3cr3t-pw (retry) and s3cr3t-pw again',
      'glued:a-very-long-client-secret-valueXYZ',
      `url https://u:${encodeURIComponent('hunter22')}@host/ hunter22`,
      'nothing here',
      '',
      `${REDACTED} already`,
    ];
    for (let round = 0; round < 3; round++) {
      for (const t of texts) expect(clean(t)).toBe(redactText(t, secrets));
    }
    expect(clean(texts[0]!)).toBe(`login failed for ${REDACTED} (retry) and ${REDACTED} again`);
    expect(textRedactor([])('s3cr3t-pw')).toBe('s3cr3t-pw');
  });

  it('knows secret keys and collects their values from a configuration', () => {
    for (const k of ['clientSecret', 'proxyPassword', 'access_token', 'Authorization', 'apiKey', 'client_secret'])
      expect(isSecretKey(k)).toBe(true);
    for (const k of ['clientId', 'baseurl', 'spConnectorInstanceId', 'sources']) expect(isSecretKey(k)).toBe(false);
    expect(secretsOf({ clientId: 'visible-id', clientSecret: 'the-secret', proxyPassword: 'x' })).toEqual([
      'the-secret',
    ]);
  });

  it('redacts fields by key at any depth and reduces errors to name and message', () => {
    const err = Object.assign(new Error('boom'), { config: { headers: { Authorization: 'Bearer t' } } });
    expect(
      redactFields({ a: 1, nested: { clientSecret: 'zzz', deeper: { token: 't' } }, err, list: ['password'] }),
    ).toEqual({
      a: 1,
      nested: { clientSecret: REDACTED, deeper: { token: REDACTED } },
      err: { message: 'boom', name: 'Error' },
      list: ['password'],
    });
  });
});
