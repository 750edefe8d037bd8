/**
 * Benchmark settings from the environment: whole numbers within a range, the
 * default when unset or blank, and a one-line error naming the variable
 * otherwise (before anything starts).
 */

/** The whole number in env[name] (unset or blank: `fallback`), from `min` (default 1) to `max` (default unbounded). */
export function intSetting(name: string, fallback: number, range: { readonly min?: number; readonly max?: number } = {}, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const min = range.min ?? 1;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const within = range.max === undefined ? `>= ${min}` : `in ${min}..${max}`;
    throw new Error(`${name} must be a whole number ${within}, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/** `env[name]` as comma-separated whole numbers in min..max, or `fallback` when unset or blank. */
export function listSetting(name: string, fallback: readonly number[], range: { readonly min?: number; readonly max?: number } = {}, env: NodeJS.ProcessEnv = process.env): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const min = range.min ?? 1;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < min || v > max)) {
    throw new Error(`${name} must be comma-separated whole numbers in ${min}..${max}, got ${JSON.stringify(raw)}`);
  }
  return values;
}
