/**
 * One tool call of an ExecuteToolRound, from the model's call to its outcome:
 * the arguments are parsed (JSON, then the tool's schema) and the tool runs;
 * a call of a tool the run did not offer, or with arguments that do not fit,
 * is answered to the model as an error without touching the editor.
 */
import type { z } from "zod";
import type { ToolCallPart } from "@byok/contracts";
import { readFile, readFileArgs } from "./read-file.ts";
import { runCommand, runCommandArgs } from "./run-command.ts";
import { todoWrite, todoWriteArgs } from "./todo-write.ts";
import { failed, type ToolContext, type ToolOutcome } from "./tool-context.ts";
import { isAcpToolName, type AcpToolName } from "./tool-names.ts";
import { editFile, editFileArgs, writeFile, writeFileArgs } from "./write-files.ts";

export async function runTool(call: ToolCallPart, offered: ReadonlySet<AcpToolName>, ctx: ToolContext): Promise<ToolOutcome> {
  const name = call.name;
  if (!isAcpToolName(name) || !offered.has(name)) return failed(`There is no tool ${JSON.stringify(name)} here; use one of: ${[...offered].join(", ")}.`);
  let json: unknown;
  try {
    json = JSON.parse(call.argumentsJson === "" ? "{}" : call.argumentsJson);
  } catch {
    return failed(`The arguments of ${name} are not valid JSON.`);
  }
  switch (name) {
    case "read_file":
      return withArgs(readFileArgs, json, name, (args) => readFile(args, ctx));
    case "write_file":
      return withArgs(writeFileArgs, json, name, (args) => writeFile(args, ctx, offered.has("read_file")));
    case "edit_file":
      return withArgs(editFileArgs, json, name, (args) => editFile(args, ctx));
    case "run_command":
      return withArgs(runCommandArgs, json, name, (args) => runCommand(args, ctx));
    case "todo_write":
      return withArgs(todoWriteArgs, json, name, (args) => todoWrite(args, ctx));
    default: {
      const unreachable: never = name;
      throw new Error(`unknown tool ${String(unreachable)}`);
    }
  }
}

async function withArgs<S extends z.ZodType>(schema: S, json: unknown, name: string, run: (args: z.infer<S>) => ToolOutcome | Promise<ToolOutcome>): Promise<ToolOutcome> {
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`).join("; ");
    return failed(`Invalid arguments for ${name}: ${issues}`);
  }
  return run(parsed.data);
}
