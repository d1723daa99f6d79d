/**
 * Tells Kubernetes which worker pods to remove first when the workers scale in. A ReplicaSet scaling
 * down removes the pods with the lowest `controller.kubernetes.io/pod-deletion-cost` first (Kubernetes
 * 1.22 and later, on by default): a worker keeps it at the number of commands it runs, so an idle
 * worker goes before one in the middle of an aggregation (which would otherwise be cut, or hold its
 * pod for the whole grace period). Best effort: the Kubernetes API being unreachable never stops a
 * command; the cost is retried and a failure is logged once a minute.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { Logger as PinoLogger } from 'pino';

export const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
/** Where the kubelet mounts the service account's token and the cluster's CA. */
const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

const RETRY_MS = 10_000;
const WARN_EVERY_MS = 60_000;

export interface PodDeletionCostOptions {
  /** https://host:port of the Kubernetes API. */
  apiUrl: string;
  namespace: string;
  pod: string;
  /** Read at each call: projected service account tokens are renewed while the pod runs. */
  token: () => string;
  /** PEM of the CA that signs the API server's certificate. */
  ca: string | Buffer;
  logger: PinoLogger;
}

export class PodDeletionCost {
  private wanted = 0;
  private sent: number | undefined;
  private sending: Promise<void> | undefined;
  private retry: NodeJS.Timeout | undefined;
  private lastWarn = 0;
  private closed = false;

  constructor(private readonly opts: PodDeletionCostOptions) {}

  /** In-cluster settings: the kubelet's KUBERNETES_SERVICE_* variables and the mounted service account. */
  static inCluster(
    pod: { name: string; namespace: string },
    logger: PinoLogger,
    source: NodeJS.ProcessEnv = process.env,
    dir = SERVICE_ACCOUNT_DIR,
  ): PodDeletionCost {
    const host = source.KUBERNETES_SERVICE_HOST;
    const port = source.KUBERNETES_SERVICE_PORT ?? '443';
    if (!host) throw new Error('POD_DELETION_COST needs the Kubernetes API: KUBERNETES_SERVICE_HOST is not set');
    let ca: Buffer;
    try {
      ca = readFileSync(`${dir}/ca.crt`);
      readFileSync(`${dir}/token`);
    } catch {
      throw new Error(
        `POD_DELETION_COST needs a service account token mounted at ${dir} (automountServiceAccountToken)`,
      );
    }
    return new PodDeletionCost({
      apiUrl: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
      namespace: pod.namespace,
      pod: pod.name,
      token: () => readFileSync(`${dir}/token`, 'utf8').trim(),
      ca,
      logger,
    });
  }

  /** The pod's cost from now on: the commands it runs. Only changes reach the API, one call at a time. */
  set(cost: number): void {
    this.wanted = cost;
    this.sending ??= this.flush().then((sent) => {
      this.sending = undefined;
      // A change that came between the loop's last check and this callback found a call in flight
      // and left it to that call: send it now (after a failure the retry timer does).
      if (sent && !this.closed && this.sent !== this.wanted) this.set(this.wanted);
    });
  }

  /** Waits for the call in flight (tests; shutdown leaves the last value, which the pod's end makes moot). */
  async settled(): Promise<void> {
    while (this.sending) await this.sending;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
  }

  /** False when a call failed (the retry timer takes over). */
  private async flush(): Promise<boolean> {
    while (!this.closed && this.sent !== this.wanted) {
      const value = this.wanted;
      try {
        await this.patch(value);
        this.sent = value;
      } catch (e) {
        this.warn(e);
        if (this.retry) clearTimeout(this.retry);
        this.retry = setTimeout(() => this.set(this.wanted), RETRY_MS);
        this.retry.unref();
        return false;
      }
    }
    return true;
  }

  private warn(e: unknown): void {
    const now = Date.now();
    if (now - this.lastWarn < WARN_EVERY_MS) return;
    this.lastWarn = now;
    this.opts.logger.warn(
      { err: { message: e instanceof Error ? e.message : String(e) }, pod: this.opts.pod },
      `could not set this worker's ${POD_DELETION_COST_ANNOTATION}: a scale-in may pick it while it runs commands (check the chart's Role for pods/patch); retrying`,
    );
  }

  private patch(cost: number): Promise<void> {
    const { apiUrl, namespace, pod, ca } = this.opts;
    const body = JSON.stringify({ metadata: { annotations: { [POD_DELETION_COST_ANNOTATION]: String(cost) } } });
    const url = new URL(`/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}`, apiUrl);
    return new Promise<void>((resolve, reject) => {
      const req = https.request(
        url,
        {
          method: 'PATCH',
          ca,
          timeout: 10_000,
          headers: {
            authorization: `Bearer ${this.opts.token()}`,
            'content-type': 'application/merge-patch+json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode !== undefined && res.statusCode < 300
              ? resolve()
              : reject(new Error(`the Kubernetes API answered ${res.statusCode} to PATCH pods/${pod}`)),
          );
        },
      );
      req.on('timeout', () => req.destroy(new Error('the Kubernetes API did not answer within 10 s')));
      req.on('error', reject);
      req.end(body);
    });
  }
}
