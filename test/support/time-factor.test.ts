import { parseFactor, scaled } from './time-factor';

describe('TEST_TIME_FACTOR', () => {
  it('defaults to 1: limits are what the tests say', () => {
    expect(parseFactor(undefined)).toBe(1);
    expect(parseFactor('')).toBe(1);
    // This run's own factor, whatever it is, scales and rounds.
    expect(scaled(1000) / 1000).toBeCloseTo(parseFactor(process.env.TEST_TIME_FACTOR), 2);
  });

  it('takes any number above 0', () => {
    expect(parseFactor('2')).toBe(2);
    expect(parseFactor('0.5')).toBe(0.5);
  });

  it('refuses what is not a number above 0, naming the variable', () => {
    for (const bad of ['0', '-1', 'two', 'Infinity', 'NaN'])
      expect(() => parseFactor(bad)).toThrow(/TEST_TIME_FACTOR must be a number above 0/);
  });
});
