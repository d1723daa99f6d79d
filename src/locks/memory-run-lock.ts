import { randomUUID } from 'node:crypto';
import type { RunLock } from '../core/ports/run-lock';

/** The run lock of embedded mode: one process, so a map with expiry times is enough. */
export class MemoryRunLock implements RunLock {
  private readonly held = new Map<string, { token: string; expiresAt: number }>();
  /** One process: a restarted process is another scope, its predecessor's runs unknown to it. */
  private readonly id = `memory:${randomUUID()}`;

  async scope(): Promise<string> {
    return this.id;
  }

  constructor(private readonly now: () => number = Date.now) {}

  private current(key: string): { token: string; expiresAt: number } | undefined {
    const entry = this.held.get(key);
    if (entry && entry.expiresAt <= this.now()) {
      this.held.delete(key);
      return undefined;
    }
    return entry;
  }

  async acquire(key: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.current(key)) return false;
    this.held.set(key, { token, expiresAt: this.now() + ttlMs });
    return true;
  }

  async renew(key: string, token: string, ttlMs: number): Promise<boolean> {
    const entry = this.current(key);
    if (!entry || entry.token !== token) return false;
    entry.expiresAt = this.now() + ttlMs;
    return true;
  }

  async holder(key: string): Promise<string | undefined> {
    return this.current(key)?.token;
  }

  async release(key: string, token: string): Promise<boolean> {
    const entry = this.current(key);
    if (!entry || entry.token !== token) return false;
    this.held.delete(key);
    return true;
  }
}
