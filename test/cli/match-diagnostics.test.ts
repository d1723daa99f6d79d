/**
 * `fusion-proxy match` on the attribute list an administrator writes for HR data (issue 26), with the
 * real model on an HR-like set of bench:quality: the configuration warnings name the correlated
 * attributes, the one without evidence and the ones too common to make candidates; candidates per
 * account stay bounded; the report (default settings, with a truth file) keeps every label readable.
 */
import { join } from 'node:path';
import { HR_BASE, hrSet } from '../../bench/quality-hr';
import { truthPairs } from '../../bench/quality-data';
import { matchCli as cli, matchInputs, renderedDom } from '../support/match-cli';
import { scaled } from '../support/time-factor';

const { dir, file } = matchInputs('match-diagnostics-');

const set = hrSet({ ...HR_BASE, name: 'hr', seed: 3, identities: 700, accounts: 400 });
const identities = file('identities.json', JSON.stringify(set.identities));
const accounts = file('accounts.json', JSON.stringify(set.accounts));
const truth = file('truth.csv', ['accountId,candidateId', ...truthPairs(set).map(([a, c]) => `${a},${c}`)].join('\n'));
const ADMIN = [
  { attribute: 'displayName', algorithm: 'name-matcher', threshold: 80 },
  { attribute: 'firstName', algorithm: 'name-matcher', threshold: 80 },
  { attribute: 'lastName', algorithm: 'jaro-winkler', threshold: 85 },
  { attribute: 'email', algorithm: 'jaro-winkler', threshold: 90 },
  { attribute: 'employeeNumber', algorithm: 'exact', threshold: 100 },
  { attribute: 'department', algorithm: 'exact', threshold: 100 },
  { attribute: 'randomCode', algorithm: 'exact', threshold: 100 },
];
const config = file('config.json', JSON.stringify({ matching: { model: 'probabilistic', attributes: ADMIN } }));

describe('fusion-proxy match: configuration diagnostics (issue 26)', () => {
  jest.setTimeout(scaled(180_000));

  it('warns about correlated, evidence-free and too common attributes, and bounds the candidates per account', async () => {
    const page = join(dir, 'report.html');
    const r = await cli([
      '--identities',
      identities,
      '--accounts',
      accounts,
      '--config',
      config,
      '--truth',
      truth,
      '--report',
      page,
    ]);
    expect(r.code).toBe(0);
    const warnings = r.err.slice(r.err.indexOf('configuration warnings:'));
    expect(warnings).toMatch(/firstName holds part of displayName on most records/);
    expect(warnings).toMatch(/lastName holds part of displayName on most records/);
    expect(warnings).toMatch(/randomCode carries no evidence/);
    expect(warnings).toMatch(
      /department: one random pair in \d+ agrees on it, too little evidence to make a candidate/,
    );
    expect(warnings).not.toMatch(/employeeNumber carries no evidence/);
    expect(warnings).not.toMatch(/displayName (holds|carries|:)/);
    // The department (20 values) and the fuzzy e-mail once brought hundreds of candidates per account.
    const mean = Number(/candidates per account: mean ([0-9.]+)/.exec(r.err)![1]);
    expect(mean).toBeLessThan(20);
    const dom = await renderedDom(page);
    expect(dom).toContain('data-drawn="4"');
    expect(dom).toContain('data-overlaps="0"');
    expect(dom).toContain('data-clipped="0"');
    expect(dom).toContain('class="warning"');
  });
});
