import { describe, expect, it } from "vitest";
import type { ModelEventBody } from "../../events.ts";
import { BlockSequencer } from "./block-sequencer.ts";

function run(events: ModelEventBody[]): string[] {
  const out: string[] = [];
  const sequencer = new BlockSequencer({
    open: (b) => out.push(`open ${b.kind === "tool" ? b.callId : b.kind}`),
    delta: (t) => out.push(`+${t}`),
    close: (args) => out.push(`close${args === undefined ? "" : ` ${args}`}`),
  });
  for (const event of events) sequencer.event(event);
  sequencer.flush();
  return out;
}

const start = (index: number, callId: string): ModelEventBody => ({ case: "toolCallStart", value: { index, callId, name: "f" } });
const args = (index: number, delta: string): ModelEventBody => ({ case: "toolCallArgsDelta", value: { index, delta } });
const end = (index: number, argumentsJson: string): ModelEventBody => ({ case: "toolCallEnd", value: { index, argumentsJson } });

describe("BlockSequencer", () => {
  it("closes a call with complete arguments early when the next one starts (chat parallel calls)", () => {
    expect(run([start(0, "a"), args(0, '{"p":'), args(0, "1}"), start(1, "b"), args(1, "{}"), end(0, '{"p":1}'), end(1, "{}")])).toEqual([
      "open a",
      '+{"p":',
      "+1}",
      'close {"p":1}',
      "open b",
      "+{}",
      "close {}",
    ]);
  });

  it("holds a block back while the call on the wire is incomplete, then sends it", () => {
    expect(run([start(0, "a"), args(0, '{"p":'), start(1, "b"), args(1, "{}"), args(0, "1}"), end(0, '{"p":1}'), end(1, "{}")])).toEqual([
      "open a",
      '+{"p":',
      "+1}",
      'close {"p":1}',
      "open b",
      "+{}",
      "close {}",
    ]);
  });

  it("sends the rest of final arguments that were not streamed (Responses .done, empty arguments)", () => {
    expect(run([start(0, "a"), end(0, '{"x":true}'), start(1, "b"), end(1, "{}")])).toEqual(["open a", '+{"x":true}', 'close {"x":true}', "open b", "+{}", "close {}"]);
  });

  it("at the end drops a waiting call that never ended (cut by the output limit) and closes the one on the wire", () => {
    expect(run([start(0, "a"), args(0, '{"x":'), start(1, "b"), args(1, '{"y"')])).toEqual(["open a", '+{"x":', 'close {"x":']);
  });
});
