import type { AxiosInstance, AxiosResponse, RawAxiosRequestConfig } from 'axios';
import type { CallOptions, PlatformIdentity } from '../core/ports/platform';
import type { LibraryHandle } from './library';
import type { PlatformRequest } from './request-executor';

/** One library call on an axios instance the executor prepared (token, limiter, timeout). */
export type Send<T> = (axios: AxiosInstance, options: RawAxiosRequestConfig) => Promise<AxiosResponse<T>>;

/**
 * What a sibling adapter (the review forms) needs from the platform client: one request path
 * with the same token, limiter, retries and typed errors, the library configuration, and the
 * identity search (reviewers are identities holding an access profile).
 */
export interface PlatformCaller {
  call<T>(req: PlatformRequest, send: Send<T>, opts?: CallOptions, pageSignal?: AbortSignal): Promise<AxiosResponse<T>>;
  readonly configuration: LibraryHandle['configuration'];
  pageSize(endpointMax: number): number;
  searchIdentities(query: string, opts?: CallOptions): AsyncIterable<PlatformIdentity>;
}
