import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance } from 'axios';
import { Configuration } from './sailpoint-api';

/**
 * How we hold sailpoint-api-client safely (see research notes, "sailpoint-api-client 1.4.15"):
 * - `accessToken` is set, so the Configuration constructor fetches nothing (its own eager fetch
 *   rejects unhandled and crashes the process when the token endpoint fails); our provider
 *   supplies the token per request instead.
 * - `retriesConfig.retries = 0`: our executor is the only retry layer.
 * - The library calls axiosRetry() on the axios instance for every request, adding two
 *   interceptors each time. Each call therefore gets its own fresh instance (never the global
 *   one), which is dropped afterwards; connections are still reused through shared agents.
 */
export class LibraryHandle {
  readonly configuration: Configuration;
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: 64 });

  constructor(baseurl: string, token: () => Promise<string>) {
    const cfg = new Configuration({ baseurl, accessToken: 'unused' });
    cfg.accessToken = async () => token();
    cfg.retriesConfig = { retries: 0 };
    // Only beta and v3 classes are used: they do not carry the experimental header, so the
    // library never prints its per-call "Experimental APIs" warning.
    cfg.experimental = false;
    this.configuration = cfg;
  }

  /** A fresh axios instance for one call. */
  axios(): AxiosInstance {
    return axios.create({ httpAgent: this.httpAgent, httpsAgent: this.httpsAgent, maxRedirects: 0 });
  }

  /** Sockets carrying a request right now (idle keep-alive sockets not counted). */
  openSockets(): number {
    let n = 0;
    for (const agent of [this.httpAgent, this.httpsAgent])
      for (const list of Object.values(agent.sockets)) n += list?.length ?? 0;
    return n;
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}
