import { randomBytes, timingSafeEqual } from 'node:crypto';

export interface SimClient {
  clientId: string;
  clientSecret: string;
  /** e.g. ['sp:scopes:all']; an endpoint answers 403 when none of its scopes is held. */
  scopes: string[];
}

interface TokenRecord {
  clientId: string;
  scopes: string[];
  expiresAt: number;
}

export type TokenCheck = { ok: true; clientId: string; scopes: string[] } | { ok: false; reason: string };

function sameSecret(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Client-credential registry and the opaque bearer tokens issued for it. */
export class AuthService {
  private readonly clients = new Map<string, SimClient>();
  private readonly tokens = new Map<string, TokenRecord>();
  tokensIssued = 0;

  constructor(
    clients: SimClient[],
    public tokenTtlSeconds: number,
  ) {
    for (const c of clients) this.addClient(c);
  }

  addClient(c: SimClient): void {
    this.clients.set(c.clientId, { ...c, scopes: [...c.scopes] });
  }

  issue(clientId: string, clientSecret: string): { token: string; client: SimClient } | undefined {
    const c = this.clients.get(clientId);
    if (!c || !sameSecret(c.clientSecret, clientSecret)) return undefined;
    const token = randomBytes(24).toString('base64url');
    this.tokens.set(token, { clientId, scopes: c.scopes, expiresAt: Date.now() + this.tokenTtlSeconds * 1000 });
    this.tokensIssued++;
    return { token, client: c };
  }

  check(authorization: string | undefined): TokenCheck {
    if (!authorization) return { ok: false, reason: 'Missing Authorization header' };
    const m = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!m) return { ok: false, reason: 'Authorization header is not a bearer token' };
    const rec = this.tokens.get(m[1] as string);
    if (!rec) return { ok: false, reason: 'Invalid or revoked access token' };
    if (rec.expiresAt <= Date.now()) {
      this.tokens.delete(m[1] as string);
      return { ok: false, reason: 'Access token expired' };
    }
    return { ok: true, clientId: rec.clientId, scopes: rec.scopes };
  }

  /** Revokes every token of a client (or all tokens); returns how many were revoked. */
  revokeTokens(clientId?: string): number {
    let n = 0;
    for (const [t, rec] of this.tokens) {
      if (clientId === undefined || rec.clientId === clientId) {
        this.tokens.delete(t);
        n++;
      }
    }
    return n;
  }
}

/**
 * Scopes accepted per endpoint group (any one suffices; sp:scopes:all always does). Derived from the
 * spec's Authentication table; source and task scopes follow the platform's idn:* naming.
 */
export const SCOPES = {
  sourcesRead: ['sp:scopes:all', 'idn:sources:read', 'idn:sources:manage', 'sp:scim:read', 'sp:accounts:read'],
  sourcesWrite: ['sp:scopes:all', 'idn:sources:manage', 'sp:scim:write'],
  accountsRead: ['sp:scopes:all', 'sp:accounts:read', 'sp:accounts:write', 'sp:scim:read', 'sp:scim:write'],
  accountsWrite: ['sp:scopes:all', 'sp:accounts:write', 'sp:scim:write'],
  search: ['sp:scopes:all', 'sp:search:read', 'sp:scim:read', 'sp:scim:write'],
  forms: ['sp:scopes:all', 'sp:forms:manage'],
  workflows: ['sp:scopes:all', 'sp:workflow:execute', 'sp:workflow:manage'],
  accessProfiles: ['sp:scopes:all', 'idn:access-profile:read', 'idn:access-profile:manage', 'sp:scim:read'],
  tasks: ['sp:scopes:all', 'idn:task-status:read', 'idn:sources:manage', 'sp:scim:read'],
} as const;

export type ScopeGroup = keyof typeof SCOPES;

export function hasScope(held: readonly string[], group: ScopeGroup): boolean {
  const needed: readonly string[] = SCOPES[group];
  return held.some((s) => needed.includes(s));
}
