/**
 * Runtime context for the model, rendered from the client's RequestContext.
 * It is appended to the history once, as a user-role message, and only when it
 * differs from the latest context message already there (prefix stability: it
 * is never regenerated per call or per turn). Nothing volatile (dates, request
 * ids) goes into it.
 */
import { create } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";
import type { agent } from "@byok/cursor-protocol";
import { CONTEXT_ID_PREFIX } from "../root-codec/user-origin.ts";

/**
 * The `<user_info>` block (environment) and the `<custom_subagents>` block
 * (sub-agent types a Task may name), or undefined when the client sent neither.
 */
export function renderRequestContext(context: agent.RequestContext | undefined): string | undefined {
  const blocks = [userInfoBlock(context?.env), customSubagentsBlock(context?.customSubagents ?? [])].filter((b) => b !== undefined);
  return blocks.length === 0 ? undefined : blocks.join("\n\n");
}

function userInfoBlock(env: agent.RequestContextEnv | undefined): string | undefined {
  if (env === undefined) return undefined;
  const lines: string[] = [];
  const add = (label: string, value: string) => {
    if (value.trim() !== "") lines.push(`${label}: ${value}`);
  };
  add("OS Version", env.osVersion);
  add("Shell", env.shell);
  for (const path of env.workspacePaths) add("Workspace Path", path);
  add("Project Folder", env.projectFolder);
  add("Terminals Folder", env.terminalsFolder);
  add("Time Zone", env.timeZone);
  if (lines.length === 0) return undefined;
  return `<user_info>\n${lines.join("\n")}\n</user_info>`;
}

/** Custom sub-agents sorted by name (stable text for the same definitions). */
function customSubagentsBlock(subagents: readonly agent.CustomSubagent[]): string | undefined {
  const named = subagents.filter((s) => s.name.trim() !== "").sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (named.length === 0) return undefined;
  const lines = named.map((s) => `- ${s.name.trim()}${s.description.trim() === "" ? "" : `: ${s.description.trim().replace(/\s+/g, " ")}`}`);
  return `<custom_subagents>\nSub-agent types the Task tool can start besides generalPurpose, explore and shell:\n${lines.join("\n")}\n</custom_subagents>`;
}

export function contextClientId(text: string): string {
  return `${CONTEXT_ID_PREFIX}${createHash("sha256").update(text).digest("hex")}`;
}

export function contextMessage(text: string): Message {
  return create(MessageSchema, {
    body: {
      case: "user",
      value: { clientId: contextClientId(text), origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text } } }] },
    },
  });
}

/** Text of the latest injected-context message in `history`, if any. */
export function latestContextText(history: readonly Message[]): string | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const body = history[i]!.body;
    if (body.case !== "user" || body.value.origin !== UserOrigin.CONTEXT) continue;
    return body.value.content.map((p) => (p.part.case === "text" ? p.part.value.text : "")).join("");
  }
  return undefined;
}

/** The context message to append for this run, or undefined when nothing changed. */
export function contextToAppend(context: agent.RequestContext | undefined, history: readonly Message[]): Message | undefined {
  return contextAfter(context, latestContextText(history));
}

/** As contextToAppend, given the newest context text of the history (undefined = none). */
export function contextAfter(context: agent.RequestContext | undefined, latestText: string | undefined): Message | undefined {
  const text = renderRequestContext(context);
  if (text === undefined || text === latestText) return undefined;
  return contextMessage(text);
}
