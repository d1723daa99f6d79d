/** Reads a TEST_TIME_FACTOR value: a number above 0, default 1; anything else throws. */
export declare function parseFactor(raw: string | undefined): number;
/** A limit in milliseconds, scaled by TEST_TIME_FACTOR. */
export declare function scaled(ms: number): number;
