/**
 * A plain in-memory PlatformPort for unit tests of pure core logic (end-to-end tests use the
 * simulator over HTTP). It also plays the platform's side of an aggregation (ingest), and counts
 * calls per method so tests can assert "a constant number of platform calls".
 */
import { randomUUID } from 'node:crypto';
import type {
  CallOptions,
  PlatformAccount,
  PlatformIdentity,
  PlatformSession,
  PlatformSource,
  PlatformTask,
  SourceSchema,
} from '../../src/core/ports/platform';

export class FakePlatform implements PlatformSession {
  readonly sources = new Map<string, PlatformSource>();
  readonly accounts = new Map<string, PlatformAccount>();
  readonly identities = new Map<string, PlatformIdentity>();
  readonly schemas = new Map<string, SourceSchema[]>();
  readonly tasks = new Map<string, PlatformTask & { polls: number; finalState: PlatformTask['state'] }>();
  readonly calls: Record<string, number> = {};
  readonly patches: { sourceId: string; values: Record<string, unknown> }[] = [];
  /** Polls before a started aggregation task reaches its final state. */
  taskPolls = 1;
  taskOutcome: PlatformTask['state'] = 'SUCCESS';

  private count(name: string): void {
    this.calls[name] = (this.calls[name] ?? 0) + 1;
  }

  totalCalls(): number {
    return Object.values(this.calls).reduce((a, b) => a + b, 0);
  }

  addSource(name: string, opts: Partial<PlatformSource> = {}): PlatformSource {
    const s: PlatformSource = {
      id: randomUUID(),
      name,
      enabled: true,
      authoritative: false,
      connectorAttributes: {},
      ...opts,
    };
    this.sources.set(s.id, s);
    return s;
  }

  addAccount(
    source: PlatformSource,
    nativeIdentity: string,
    attributes: Record<string, unknown>,
    opts: Partial<PlatformAccount> = {},
  ): PlatformAccount {
    const a: PlatformAccount = {
      id: randomUUID(),
      sourceId: source.id,
      sourceName: source.name,
      nativeIdentity,
      name: nativeIdentity,
      disabled: false,
      isMachine: false,
      attributes,
      ...opts,
    };
    this.accounts.set(a.id, a);
    return a;
  }

  addIdentity(name: string, attributes: Record<string, unknown>): PlatformIdentity {
    const i: PlatformIdentity = { id: randomUUID(), name, attributes };
    this.identities.set(i.id, i);
    return i;
  }

  accountsOf(sourceId: string): PlatformAccount[] {
    return [...this.accounts.values()].filter((a) => a.sourceId === sourceId);
  }

  /**
   * The platform's side of an aggregation: upsert by native identity, delete what was not emitted, new accounts get an
   * identity.
   */
  ingest(
    sourceId: string,
    items: { identity: string; disabled: boolean; attributes: Record<string, unknown> }[],
  ): { created: PlatformAccount[] } {
    const source = this.sources.get(sourceId)!;
    const seen = new Set<string>();
    const created: PlatformAccount[] = [];
    for (const item of items) {
      seen.add(item.identity);
      const existing = this.accountsOf(sourceId).find((a) => a.nativeIdentity === item.identity);
      if (existing) {
        existing.attributes = item.attributes;
        existing.disabled = item.disabled;
      } else {
        const identity = this.addIdentity(String(item.attributes.name ?? item.identity), item.attributes);
        created.push(
          this.addAccount(source, item.identity, item.attributes, { disabled: item.disabled, identityId: identity.id }),
        );
      }
    }
    for (const a of this.accountsOf(sourceId)) if (!seen.has(a.nativeIdentity)) this.accounts.delete(a.id);
    return { created };
  }

  close(): void {
    this.count('close');
  }

  async *listSources(_opts?: CallOptions): AsyncIterable<PlatformSource> {
    this.count('listSources');
    for (const s of this.sources.values()) yield { ...s, connectorAttributes: { ...s.connectorAttributes } };
  }

  async getSource(id: string): Promise<PlatformSource> {
    this.count('getSource');
    const s = this.sources.get(id);
    if (!s) throw new Error(`no source ${id}`);
    return { ...s, connectorAttributes: structuredClone(s.connectorAttributes) };
  }

  async patchSourceConnectorAttributes(sourceId: string, values: Record<string, unknown>): Promise<void> {
    this.count('patchSourceConnectorAttributes');
    const s = this.sources.get(sourceId)!;
    this.patches.push({ sourceId, values: structuredClone(values) });
    s.connectorAttributes = { ...s.connectorAttributes, ...structuredClone(values) };
  }

  async getSourceSchemas(sourceId: string): Promise<SourceSchema[]> {
    this.count('getSourceSchemas');
    return this.schemas.get(sourceId) ?? [];
  }

  async *listAccounts(query: { sourceId: string; filters?: string; limit?: number }): AsyncIterable<PlatformAccount> {
    this.count('listAccounts');
    let n = 0;
    for (const a of this.accountsOf(query.sourceId)) {
      if (query.limit !== undefined && n >= query.limit) return;
      n++;
      yield { ...a, attributes: { ...a.attributes } };
    }
  }

  async getAccount(id: string): Promise<PlatformAccount | undefined> {
    this.count('getAccount');
    return this.accounts.get(id);
  }

  async findAccountByNativeIdentity(sourceId: string, nativeIdentity: string): Promise<PlatformAccount | undefined> {
    this.count('findAccountByNativeIdentity');
    const a = this.accountsOf(sourceId).find((x) => x.nativeIdentity === nativeIdentity);
    return a ? { ...a, attributes: { ...a.attributes } } : undefined;
  }

  async *searchIdentities(query: string): AsyncIterable<PlatformIdentity> {
    this.count('searchIdentities');
    for (const i of this.identities.values()) {
      if (query === '*' || Object.values(i.attributes).some((v) => String(v) === query)) yield i;
    }
  }

  async getIdentity(id: string): Promise<PlatformIdentity | undefined> {
    this.count('getIdentity');
    return this.identities.get(id);
  }

  async startAggregation(sourceId: string): Promise<PlatformTask> {
    this.count('startAggregation');
    const task = {
      id: randomUUID(),
      state: 'RUNNING' as const,
      messages: [],
      polls: 0,
      finalState: this.taskOutcome,
      sourceId,
    };
    this.tasks.set(task.id, task);
    return { id: task.id, state: task.state, messages: [] };
  }

  async getTask(taskId: string): Promise<PlatformTask> {
    this.count('getTask');
    const t = this.tasks.get(taskId)!;
    t.polls++;
    if (t.polls >= this.taskPolls) {
      t.state = t.finalState;
      if (t.finalState === 'ERROR') t.messages = ['connector error: host unreachable'];
    }
    return { id: t.id, state: t.state, messages: [...t.messages] };
  }
}
