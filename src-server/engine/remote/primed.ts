/**
 * A generator whose first item can be pulled ahead (`prime`) and is then yielded first: a
 * remote run is started and its first event awaited before a response's headers go out.
 */
export function primed<T>(source: AsyncGenerator<T, void, undefined>): { events: AsyncGenerator<T, void, undefined>; prime: () => Promise<void> } {
  let head: IteratorResult<T, void> | undefined;
  let priming: Promise<void> | undefined;
  const prime = () =>
    (priming ??= source.next().then((result) => {
      head = result;
    }));
  async function* events(): AsyncGenerator<T, void, undefined> {
    try {
      if (priming) await priming;
      if (head) {
        if (head.done) return;
        const first = head.value;
        head = undefined;
        yield first;
      }
      for (;;) {
        const next = await source.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      await source.return();
    }
  }
  return { events: events(), prime };
}
