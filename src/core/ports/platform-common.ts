/** Types both platform ports use (platform.ts and review-platform.ts): one home, no import cycle. */

export interface CallOptions {
  signal?: AbortSignal;
}

export interface PlatformIdentity {
  id: string;
  name: string;
  attributes: Record<string, unknown>;
}
