/**
 * The environment of a session's runs, told to the model once as a context
 * message (UserOrigin.CONTEXT) and again only when it changes (ARCHITECTURE
 * §5.2: runtime context is appended when it happens, never regenerated per
 * call): the working directory, extra workspace directories and the editor.
 * Its client id `acp-context:<digest>` names the content, so the
 * adapter can tell from the history whether the model already has it.
 */
import { createHash } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { MessageSchema, UserOrigin, type Message } from "@byok/contracts";

export const CONTEXT_CLIENT_ID_PREFIX = "acp-context:";

export interface SessionEnvironment {
  readonly cwd: string;
  readonly additionalDirectories: readonly string[];
  /** "Zed 0.200.0" from initialize's clientInfo, when given. */
  readonly editor: string | undefined;
}

export function contextText(env: SessionEnvironment): string {
  const lines = ["<environment>", `Working directory: ${env.cwd}`];
  if (env.additionalDirectories.length > 0) lines.push(`Other workspace directories: ${env.additionalDirectories.join(", ")}`);
  if (env.editor !== undefined) lines.push(`Editor: ${env.editor}`);
  lines.push("</environment>");
  return lines.join("\n");
}

/** The digest part of the client id: the content's SHA-256 (128 bits, hex). */
export function contextDigest(env: SessionEnvironment): string {
  return createHash("sha256").update(contextText(env)).digest("hex").slice(0, 32);
}

export function contextMessage(env: SessionEnvironment): Message {
  return create(MessageSchema, {
    body: {
      case: "user",
      value: { clientId: `${CONTEXT_CLIENT_ID_PREFIX}${contextDigest(env)}`, origin: UserOrigin.CONTEXT, content: [{ part: { case: "text", value: { text: contextText(env) } } }] },
    },
  });
}

/** The digest of the last context message of a history ("" when it has none). */
export function lastContextDigest(history: readonly Message[]): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const body = history[i]?.body;
    if (body?.case === "user" && body.value.origin === UserOrigin.CONTEXT && body.value.clientId.startsWith(CONTEXT_CLIENT_ID_PREFIX)) {
      return body.value.clientId.slice(CONTEXT_CLIENT_ID_PREFIX.length);
    }
  }
  return "";
}
