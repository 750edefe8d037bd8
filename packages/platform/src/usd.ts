/**
 * Money without floats. Amounts are whole picodollars (1 USD = 10^12 pUSD) as
 * bigint; on the wire and in Postgres they are decimal strings in USD with at
 * most 12 fractional digits ("0.000123", "5"). Token prices are USD per
 * million tokens with at most 6 fractional digits, held as whole microdollars
 * per million tokens: n tokens at p µUSD/Mtok cost exactly n * p pUSD.
 */

export const PICO_PER_USD = 10n ** 12n;

const USD_DECIMAL = /^(0|[1-9][0-9]{0,17})(?:\.([0-9]{1,12}))?$/;
const PRICE_DECIMAL = /^(0|[1-9][0-9]{0,11})(?:\.([0-9]{1,6}))?$/;

/** Picodollars of a non-negative USD decimal ("1.25"); undefined when it is not one. */
export function parseUsd(text: string): bigint | undefined {
  const match = USD_DECIMAL.exec(text.trim());
  if (match === null) return undefined;
  const whole = BigInt(match[1] ?? "0");
  const fraction = BigInt((match[2] ?? "").padEnd(12, "0"));
  return whole * PICO_PER_USD + fraction;
}

/** The shortest USD decimal of `pico` picodollars ("0.0125", "3", "-0.5"). */
export function formatUsd(pico: bigint): string {
  const negative = pico < 0n;
  const abs = negative ? -pico : pico;
  const whole = abs / PICO_PER_USD;
  const fraction = (abs % PICO_PER_USD).toString().padStart(12, "0").replace(/0+$/, "");
  return `${negative ? "-" : ""}${whole}${fraction === "" ? "" : `.${fraction}`}`;
}

/**
 * A price in USD per million tokens (a JSON number or a decimal string, at
 * most 6 fractional digits) as microdollars per million tokens; undefined
 * when it is not one. JSON numbers are read through their shortest decimal
 * form, so 0.075 is exactly 75000.
 */
export function parsePricePerMillion(value: number | string): bigint | undefined {
  const text = typeof value === "number" ? (Number.isFinite(value) && value >= 0 ? numberText(value) : "") : value.trim();
  const match = PRICE_DECIMAL.exec(text);
  if (match === null) return undefined;
  return BigInt(match[1] ?? "0") * 1_000_000n + BigInt((match[2] ?? "").padEnd(6, "0"));
}

/** A non-negative JSON number as plain decimal text (no exponent). */
function numberText(value: number): string {
  const text = String(value);
  if (!/e/i.test(text)) return text;
  // e.g. 1e-7: more digits than a price may have, so it fails the pattern as intended.
  return value.toFixed(20).replace(/\.?0+$/, "");
}

/** `a / b` rounded up (both positive). */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
