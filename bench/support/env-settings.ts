/** Benchmark settings from the environment: whole numbers in a range, and comma-separated lists of them. */

/** `env[name]` as an integer in min..max, or `fallback` when unset or empty; anything else throws naming the variable. */
export function intSetting(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return value;
}

/** `env[name]` as comma-separated integers in min..max, or `fallback` when unset or empty. */
export function listSetting(env: NodeJS.ProcessEnv, name: string, fallback: readonly number[], min = 1, max = 5_000): readonly number[] {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v < min || v > max)) throw new Error(`${name} must be comma-separated integers in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return values;
}
