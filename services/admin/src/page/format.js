// How the page writes numbers, money, times and durations.

const integer = new Intl.NumberFormat("en-US");

export function count(value) {
  return value === undefined || value === null ? "–" : integer.format(value);
}

/** USD from the API's decimal string; undefined/null = unknown (never shown as 0). */
export function usd(value, unknownCalls = 0) {
  if (value === undefined || value === null || value === "") return unknownCalls > 0 ? "unknown" : "–";
  const n = Number(value);
  const text = n !== 0 && Math.abs(n) < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(2)}`;
  return unknownCalls > 0 ? `${text} + ${unknownCalls} unknown` : text;
}

export function time(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  return d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function date(iso) {
  if (!iso) return "–";
  return new Date(iso).toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
}

export function duration(ms) {
  if (ms === undefined || ms === null) return "–";
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s % 60)} s`;
}

/** input + output tokens of a usage object, "–" when neither was reported. */
export function tokens(usage) {
  if (!usage) return "–";
  const known = [usage.inputTokens, usage.outputTokens].filter((v) => v !== undefined && v !== null);
  if (known.length === 0) return "–";
  return `${count(usage.inputTokens ?? 0)} / ${count(usage.outputTokens ?? 0)}`;
}

export function shortId(id) {
  return id && id.length > 14 ? `${id.slice(0, 8)}…` : id || "–";
}
