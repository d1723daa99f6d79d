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
}

export function resultKeys(queueName: string, jobId: string): ResultKeys {
  const base = `fusion:${queueName}:{${jobId}}`;
  return { stream: `${base}:out`, cancel: `${base}:cancel` };
}

export const ENTRY = { started: 's', progress: 'p', data: 'd', end: 'end', error: 'err' } as const;
