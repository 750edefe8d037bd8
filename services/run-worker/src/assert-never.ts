/** The default branch of an exhaustive switch: unreachable while every member of the union is handled. */
export function assertNever(value: never, what = "case"): never {
  throw new Error(`unhandled ${what} ${JSON.stringify(value)}`);
}
