/**
 * Plain words for the probabilistic model's comparison levels and its prior, for the tuning report and
 * the summary: what a reviewer's manager reads beside each weight.
 */

const WORDS: Record<string, string> = {
  exact: 'the same value on both records',
  different: 'the values differ',
  missing: 'one record has no value: no evidence either way (weight 0)',
  'same given name, other surname': 'same first name, another surname (a marriage or divorce, or another person)',
  'implied by the name': 'the surname is part of the full name on both records: already counted there (weight 0)',
  'shares a token': 'one surname contains the other (a hyphenated or double surname)',
  'same local part, other domain': 'the same address before the @ at another domain',
  'local part from the names':
    'addresses made of each record’s own names (john.smith): counted by the names already (weight 0)',
  'similar local part, other domain': 'nearly the same address before the @ (a typo) at another domain',
  'same domain, other local part': 'two different mailboxes in one domain: an organisation gives a person one',
  'same local part, other number':
    'the same address but another number (john.smith2 / john.smith): the number went to someone else',
  'local parts from other names':
    'each address built from its own record’s names after a surname change: counted by the name (weight 0)',
  'same local part, alias domain': 'the same mailbox at two domains the data shows to be one organisation’s',
  'day/month swapped or one digit': 'the same date with day and month swapped or one digit wrong',
};

export function levelWords(level: string): string {
  const known = WORDS[level];
  if (known) return known;
  const fuzzy = /^fuzzy >= ([0-9.]+)$/.exec(level);
  if (fuzzy) return `similar values (the attribute’s algorithm scores ${fuzzy[1]} or more)`;
  const inside = /^inside (.+)$/.exec(level);
  if (inside) return `part of ${inside[1]} on both records: already counted there (weight 0)`;
  return level;
}

/** The prior in words: how rare a duplicate is, before any attribute is compared. */
export function priorWords(prior: number, records: number): string {
  const pct = prior * 100;
  const share = pct >= 10 ? pct.toFixed(0) : pct >= 1 ? pct.toFixed(1) : pct.toPrecision(2);
  const oneIn = Math.max(1, Math.round(records / Math.max(prior, 1e-9)));
  return `How rare a duplicate is: about ${share} % of new accounts have one among the records before them, so before any attribute is compared a given pair is the duplicate about once in ${oneIn.toLocaleString('en-US')} pairs. The attributes’ weights must outweigh that: it is the “prior” line of every explanation (negative).`;
}

/** What "match weight" means, for the report and the summary. */
export const MATCH_WEIGHT_WORDS =
  'Match weight: the sum of the weights in a pair’s explanation, in bits of evidence (each +1 doubles the odds that the two records are one person; 0 means the evidence is even). The probability shown on a form is 1 / (1 + 2^−weight).';
