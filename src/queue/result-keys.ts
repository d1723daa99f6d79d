/**
 * Redis keys of one job's result. The job id is a hash tag so both keys live in the same
 * cluster slot.
 */
export interface ResultKeys {
  /**
   * Stream of entries: t=s (started), t=p (progress), t=d (q=sequence from 0, n=items, d=NDJSON),
   * t=end (q=data entries, n=items in all), t=err (c=code, m=message).
   */
  stream: string;
  /** Present when the api asks the worker to stop (client gone, timeout). */
  cancel: string;
  /**
   * The api's lease on the job: set before the job is queued and renewed while its request is
   * open. A worker stops (or never starts) a job whose lease lapsed: the api that would read it
   * died without a word (SIGKILL, lost node), and nobody else will ever read or cancel it.
   */
  reader: string;
}

/** Lifetime of the api's reader lease; the api renews it every third of that. */
export const READER_LEASE_MS = 15_000;

export function resultKeys(queueName: string, jobId: string): ResultKeys {
  const base = `fusion:${queueName}:{${jobId}}`;
  return { stream: `${base}:out`, cancel: `${base}:cancel`, reader: `${base}:reader` };
}

export const ENTRY = { started: 's', progress: 'p', data: 'd', end: 'end', error: 'err' } as const;
