import { normalizeText } from '../normalize';
import type { Algorithm } from '../types';
import { diceKernel } from './dice';
import { doubleMetaphoneKernel } from './double-metaphone';
import { exactKernel } from './exact';
import { jaroWinklerKernel } from './jaro-winkler';
import type { Kernel } from './kernel';
import { levenshteinKernel } from './levenshtein';
import { nameMatcherKernel } from './name-matcher';

/** Calls f with the kernel of an algorithm, keeping its prepared-value type. */
export function withKernel<R>(algorithm: Algorithm, f: <P>(kernel: Kernel<P>) => R): R {
  switch (algorithm) {
    case 'name-matcher':
      return f(nameMatcherKernel);
    case 'levenshtein':
      return f(levenshteinKernel);
    case 'jaro-winkler':
      return f(jaroWinklerKernel);
    case 'dice':
      return f(diceKernel);
    case 'double-metaphone':
      return f(doubleMetaphoneKernel);
    case 'exact':
      return f(exactKernel);
  }
}

/** Score two raw values with one algorithm (normalised first); null when either is not comparable. */
export function scoreValues(algorithm: Algorithm, a: string, b: string): number | null {
  return withKernel(algorithm, (kernel) => {
    const na = normalizeText(a);
    const nb = normalizeText(b);
    const pa = na.length > 0 ? kernel.prepare(na) : null;
    const pb = nb.length > 0 ? kernel.prepare(nb) : null;
    return pa === null || pb === null ? null : kernel.score(pa, pb);
  });
}
