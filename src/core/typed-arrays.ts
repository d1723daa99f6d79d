type Growable = Int32Array<ArrayBuffer> | Uint8Array<ArrayBuffer> | Uint16Array<ArrayBuffer> | Uint32Array<ArrayBuffer>;

/** A copy of `a` in a new array of its own type holding `length` elements, the new ones 0. */
export function grown<T extends Growable>(a: T, length: number): T {
  const next = new (a.constructor as new (length: number) => T)(length);
  next.set(a as ArrayLike<number>);
  return next;
}

/** `a` itself when it holds `need` elements, else a copy at least twice as large (amortised growth). */
export function withCapacity<T extends Growable>(a: T, need: number, min = 64): T {
  return need <= a.length ? a : grown(a, Math.max(need, a.length * 2, min));
}
