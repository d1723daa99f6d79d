/**
 * How our form definitions are named and recognised. The key is the source account id, carried at
 * the end of the name ("#<id>"), never the display name: two accounts called "John Smith" on the
 * same source get two forms. The description carries the id of the connector's own source, so two
 * Identity Fusion sources in one tenant never read each other's forms.
 */
import { FusionError } from '../errors';

export const FORM_NAME_PREFIX = 'Fusion Review - ';

const ACCOUNT_ID = / #([^\s#]+)$/;
const FUSION_SOURCE = /\[fusion-source:([^\]\s]+)\]/;
const MAX_LABEL = 100;

function clip(s: string): string {
  return s.length > MAX_LABEL ? `${s.slice(0, MAX_LABEL - 1)}…` : s;
}

export function formName(accountName: string, sourceName: string, accountId: string): string {
  if (/[\s#]/.test(accountId) || accountId === '') {
    throw new FusionError(
      'INPUT_INVALID',
      `Account id ${JSON.stringify(accountId)} cannot key a review form (empty, or contains spaces or #)`,
    );
  }
  return `${FORM_NAME_PREFIX}${clip(accountName)} [${clip(sourceName)}] #${accountId}`;
}

export function formDescription(text: string, fusionSourceId: string): string {
  return `${text} [fusion-source:${fusionSourceId}]`;
}

/** The account id a definition of ours is keyed by, or undefined when the definition is not one of ours. */
export function accountIdOfForm(
  def: { name: string; description?: string },
  fusionSourceId: string,
): string | undefined {
  if (!def.name.startsWith(FORM_NAME_PREFIX)) return undefined;
  const owner = FUSION_SOURCE.exec(def.description ?? '');
  if (!owner || owner[1] !== fusionSourceId) return undefined;
  return ACCOUNT_ID.exec(def.name)?.[1];
}

/** "Ann Lee [LDAP]" from a definition name, for forms whose instances are gone. */
export function labelsOfForm(name: string): { accountName: string; sourceName: string } {
  const body = name.slice(FORM_NAME_PREFIX.length).replace(ACCOUNT_ID, '');
  const m = /^(.*) \[([^\]]*)\]$/.exec(body);
  return m ? { accountName: m[1] as string, sourceName: m[2] as string } : { accountName: body, sourceName: '' };
}

const LAYOUT = /\[fusion-layout:([0-9a-f]+)\]/;

/** The shared definition of one layout (no "#<id>": it is nobody's form on its own). */
export function layoutName(key: string): string {
  return `${FORM_NAME_PREFIX}shared layout ${key}`;
}

export function layoutDescription(key: string, fusionSourceId: string): string {
  return `Layout shared by the Identity Fusion review forms of this shape; each form instance carries its account and candidates [fusion-layout:${key}] [fusion-source:${fusionSourceId}]`;
}

/** The layout key of a shared definition of ours, or undefined. */
export function layoutOfForm(def: { name: string; description?: string }, fusionSourceId: string): string | undefined {
  if (!def.name.startsWith(FORM_NAME_PREFIX)) return undefined;
  const owner = FUSION_SOURCE.exec(def.description ?? '');
  if (!owner || owner[1] !== fusionSourceId) return undefined;
  return LAYOUT.exec(def.description ?? '')?.[1];
}
