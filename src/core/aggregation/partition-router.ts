/**
 * Which partition decides each new account of a run decided in partitions, told batch by batch as the
 * sources are read (planned-matcher.ts). A pair can match only when it shares a blocking key of the
 * plan's attribute (a mandatory attribute with lossless keys: partition-plan.ts), so records joined
 * over shared keys form classes, and a class lives in one partition (its home): the baseline's classes
 * are packed into the partitions before the first account, and each account goes to its class's home.
 *
 * An account's keys may join classes that live in different partitions (a bridge: a surname with two
 * phonetic codes, several values). Its batch then moves those classes to one of their homes: each
 * other home exports the class's records it holds (the baseline's and the accounts it created before
 * this batch) before deciding the batch, and the new home imports them before deciding it. Exports
 * carry only records from before the batch, so no partition waits on another that waits on it. The
 * old home keeps its copies: no account it decides shares a key with them, so they never pass.
 */
import { packHeaviestFirst } from '../matching/partition-plan';

/** Records a partition sends another before deciding a batch: those with any of `keys`. */
export interface PartitionMove {
  from: number;
  to: number;
  keys: string[];
}

export interface RoutedBatch {
  /** Each account's partition, in the order given. */
  partitionOf: Int32Array;
  moves: PartitionMove[];
}

/** A class as a batch started: a union appends the absorbed class's keys to the absorbing one's list. */
interface ClassAtStart {
  home: number;
  size: number;
  keys: readonly string[];
  count: number;
}

export class PartitionRouter {
  private readonly classOfKey = new Map<string, number>();
  private readonly parent: number[] = [];
  /** Per class (valid at its root): its partition, -1 before one is chosen. */
  private readonly home: number[] = [];
  /** Per class root: records in it (how much a move costs). */
  private readonly size: number[] = [];
  /** Per class root: its keys. */
  private readonly keys: string[][] = [];
  /** Records per partition (where a new class goes). */
  readonly loads: number[];
  /** Each baseline record's partition; -1: no key, so no account can match it. */
  readonly baselinePartitionOf: Int32Array;
  /** Classes moved so far (bridges between partitions) and the keys they took. */
  readonly moved = { classes: 0, keys: 0 };

  /** `baselineKeys`: each baseline record's keys. Classes are packed by phase 1's work (partition-plan.ts). */
  constructor(
    readonly parts: number,
    baselineKeys: readonly (readonly string[])[],
  ) {
    const rootOf = baselineKeys.map((k) => this.join(k));
    const roots = new Map<number, number>();
    const weights: number[] = [];
    for (let r = 0; r < rootOf.length; r++) {
      const root = (rootOf[r] = rootOf[r]! < 0 ? -1 : this.find(rootOf[r]!));
      if (root < 0) continue;
      if (!roots.has(root)) roots.set(root, roots.size);
      this.size[root]!++;
    }
    for (const root of roots.keys()) {
      // As if the run brought as many new accounts as the class holds (the plan's weight with n = b).
      const b = this.size[root]!;
      weights.push(b * (1 + b + (b - 1) / 2));
    }
    const { binOf } = packHeaviestFirst(weights, parts);
    this.loads = new Array<number>(parts).fill(0);
    for (const [root, i] of roots) {
      this.home[root] = binOf[i]!;
      this.loads[binOf[i]!]! += this.size[root]!;
    }
    this.baselinePartitionOf = Int32Array.from(rootOf, (root) => (root < 0 ? -1 : this.home[root]!));
  }

  /** Routes a batch's accounts (each one's keys, in run order). */
  route(accountKeys: readonly (readonly string[])[]): RoutedBatch {
    // Each account's classes as the batch starts: where their records are until a move.
    const before = accountKeys.map((keys) => {
      const roots = new Set<number>();
      for (const k of keys) {
        const c = this.classOfKey.get(k);
        if (c !== undefined) roots.add(this.find(c));
      }
      return roots;
    });
    const start = new Map<number, ClassAtStart>();
    for (const roots of before)
      for (const r of roots)
        if (!start.has(r))
          start.set(r, { home: this.home[r]!, size: this.size[r]!, keys: this.keys[r]!, count: this.keys[r]!.length });
    const rootOf = accountKeys.map((k) => this.join(k));
    // The classes each class at the batch's end was made of, and where it lives from now on.
    const parts = new Map<number, number[]>();
    for (const r of start.keys()) {
      const root = this.find(r);
      const list = parts.get(root);
      if (list) list.push(r);
      else parts.set(root, [r]);
    }
    const moves: PartitionMove[] = [];
    for (const [root, was] of parts) this.home[root] = this.settle(was, start, moves);
    const partitionOf = new Int32Array(accountKeys.length);
    rootOf.forEach((c, i) => {
      let p: number;
      if (c < 0) p = this.leastLoaded();
      else {
        const root = this.find(c);
        if (this.home[root]! < 0) this.home[root] = this.leastLoaded();
        p = this.home[root]!;
        this.size[root]!++;
      }
      partitionOf[i] = p;
      this.loads[p]!++;
    });
    return { partitionOf, moves };
  }

  /**
   * The home of a class made of classes `was` (as the batch started): the one of their homes holding
   * most of their records; the others move their part there (keys as the batch started).
   */
  private settle(was: readonly number[], start: ReadonlyMap<number, ClassAtStart>, moves: PartitionMove[]): number {
    const held = new Map<number, number>();
    for (const r of was) {
      const s = start.get(r)!;
      if (s.home >= 0) held.set(s.home, (held.get(s.home) ?? 0) + s.size);
    }
    if (held.size === 0) return -1;
    let to = -1;
    for (const [p, n] of held) if (to < 0 || n > held.get(to)! || (n === held.get(to)! && p < to)) to = p;
    const byHome = new Map<number, string[]>();
    for (const r of was) {
      const s = start.get(r)!;
      if (s.home < 0 || s.home === to) continue;
      const mine = s.keys.slice(0, s.count);
      const list = byHome.get(s.home);
      if (list) for (const k of mine) list.push(k);
      else byHome.set(s.home, mine);
      // The work moves; the old partition keeps its copies (memory, not work).
      this.loads[s.home]! -= s.size;
      this.loads[to]! += s.size;
      this.moved.classes++;
      this.moved.keys += mine.length;
    }
    for (const [from, keys] of byHome) moves.push({ from, to, keys });
    return to;
  }

  private leastLoaded(): number {
    let least = 0;
    for (let p = 1; p < this.parts; p++) if (this.loads[p]! < this.loads[least]!) least = p;
    return least;
  }

  /** The class of these keys, new keys joining it (a new class when none is known); -1: no key. */
  private join(keys: readonly string[]): number {
    let root = -1;
    for (const k of keys) {
      let c = this.classOfKey.get(k);
      if (c === undefined) {
        c = this.parent.length;
        this.parent.push(c);
        this.home.push(-1);
        this.size.push(0);
        this.keys.push([k]);
        this.classOfKey.set(k, c);
      }
      const r = this.find(c);
      if (root < 0) root = r;
      else if (r !== root) root = this.union(root, r);
    }
    return root;
  }

  private union(a: number, b: number): number {
    // The larger key list absorbs the smaller: each key is copied O(log n) times at most.
    const [big, small] = this.keys[a]!.length >= this.keys[b]!.length ? [a, b] : [b, a];
    this.parent[small] = big;
    this.size[big]! += this.size[small]!;
    // A loop: a spread passes every key as an argument (a stack overflow past about 100,000).
    const into = this.keys[big]!;
    for (const k of this.keys[small]!) into.push(k);
    // Only roots' lists are read; an absorbed one's stays as a batch start saw it (ClassAtStart).
    this.keys[small] = [];
    this.home[big] = this.home[big]! >= 0 ? this.home[big]! : this.home[small]!;
    return big;
  }

  private find(x: number): number {
    const parent = this.parent;
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  }
}
