import axios, { type AxiosInstance } from 'axios';
import { Configuration } from 'sailpoint-api-client';
import type { RunningSimulator } from '../../src/simulator';

/** Fetches a token with raw fetch (the way the platform layer does, not the library's eager fetch). */
export async function fetchToken(sim: { baseurl: string }, clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${sim.baseurl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }),
  });
  if (res.status !== 200) throw new Error(`token request failed: ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

export interface TestClient {
  cfg: Configuration;
  http: AxiosInstance;
  token: string;
}

/** A Configuration wired as stack-notes §4 says: no eager token fetch, no retries, a private axios instance. */
export async function testClient(
  sim: RunningSimulator,
  creds?: { clientId: string; clientSecret: string },
): Promise<TestClient> {
  const token = await fetchToken(sim, creds?.clientId ?? sim.clientId, creds?.clientSecret ?? sim.clientSecret);
  const cfg = new Configuration({ baseurl: sim.baseurl, accessToken: 'unused' });
  cfg.accessToken = async () => token;
  cfg.retriesConfig = { retries: 0 };
  cfg.experimental = true;
  return { cfg, http: axios.create(), token };
}

/** Status and body of a rejected client call. */
export async function failure(
  p: Promise<unknown>,
): Promise<{ status: number; data: unknown; headers: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    const r = (e as { response?: { status: number; data: unknown; headers: Record<string, unknown> } }).response;
    if (r) return { status: r.status, data: r.data, headers: r.headers };
    throw e;
  }
  throw new Error('expected the call to fail');
}
