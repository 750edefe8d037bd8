/**
 * `count` calls of `one`, `concurrency` of them in flight at a time (each
 * worker starts the next call when its last one ended), and their results in
 * the order they ended. The load shape every bench's client loop uses.
 */
export async function runInFlight<T>(count: number, concurrency: number, one: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let started = 0;
  const worker = async (): Promise<void> => {
    while (started < count) {
      started++;
      results.push(await one());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return results;
}
