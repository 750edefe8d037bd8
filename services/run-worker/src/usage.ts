/**
 * Turn usage over the model calls of one run (design/ARCHITECTURE.md §5.5):
 * usage comes only from the provider, one figure per call; a turn total sets a
 * field only if every call reported it. Unknown is unset, never zero.
 */
import { create } from "@bufbuild/protobuf";
import { UsageSchema, type Usage } from "@byok/contracts";

const FIELDS = ["inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"] as const;

/** Sum of the calls' usage; `undefined` entries are calls that reported nothing. */
export function sumTurnUsage(calls: ReadonlyArray<Usage | undefined>): Usage {
  const total = create(UsageSchema);
  if (calls.length === 0) return total;
  for (const field of FIELDS) {
    let sum = 0n;
    let known = true;
    for (const usage of calls) {
      const value = usage?.[field];
      if (value === undefined) {
        known = false;
        break;
      }
      sum += value;
    }
    if (known) total[field] = sum;
  }
  return total;
}

/** Context size of a call (input + output) when the provider reported both. */
export function contextTokens(usage: Usage | undefined): bigint | undefined {
  if (usage?.inputTokens === undefined || usage.outputTokens === undefined) return undefined;
  return usage.inputTokens + usage.outputTokens;
}

/** True when no field is set (nothing to report). */
export function isEmptyUsage(usage: Usage): boolean {
  return FIELDS.every((field) => usage[field] === undefined);
}
