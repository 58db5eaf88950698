/**
 * Time as a dependency: services that decide by the clock (retention, expiry) take a
 * `Clock`, so tests can advance it instead of waiting.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, like `Date.now()`. */
  now(): number;
}

/** The machine's clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** `clock.now()` in Unix seconds, the unit of every timestamp on the wire. */
export function secondsOf(clock: Clock): number {
  return Math.floor(clock.now() / 1000);
}
