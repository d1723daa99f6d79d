/**
 * A stream that fails on its first read: how a command reports an error it knows before it
 * starts, through the same channel as an error in the middle (the transports handle one path).
 */
export function failedStream<T = never>(error: Error): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]: () => ({
      next: () => Promise.reject(error),
      return: (value?: unknown) => Promise.resolve({ done: true as const, value: value as T }),
    }),
  };
}
