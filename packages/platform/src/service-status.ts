/**
 * What a service process tells the process that started it (`npm start`'s
 * supervisor, a test) over Node's IPC channel: that it started, with the
 * addresses it serves, or that it failed to start, with the error's code and
 * address (EADDRINUSE names a port). This replaces watching for log lines, so
 * readiness does not depend on LOG_LEVEL. A service started without an IPC
 * channel (compose, a terminal) sends nothing.
 */
import { z } from "zod";

/** The addresses a started service serves, e.g. { url: "http://127.0.0.1:8080" }. */
export type ServiceEndpoints = Readonly<Record<string, string>>;

const startedSchema = z.object({
  kind: z.literal("started"),
  service: z.string(),
  pid: z.number().int(),
  endpoints: z.record(z.string(), z.string()),
});

const failedSchema = z.object({
  kind: z.literal("failed"),
  service: z.string(),
  pid: z.number().int(),
  /** The error's message (one line). */
  message: z.string(),
  /** Node's error code (EADDRINUSE, EACCES, ...), when there is one. */
  code: z.string().optional(),
  address: z.string().optional(),
  port: z.number().int().optional(),
});

const envelopeSchema = z.object({ byokServiceStatus: z.discriminatedUnion("kind", [startedSchema, failedSchema]) });

export type ServiceStatus = z.infer<typeof startedSchema> | z.infer<typeof failedSchema>;

/** The IPC message for `status` (wrapped, so other IPC traffic is never mistaken for it). */
export function serviceStatusMessage(status: ServiceStatus): { byokServiceStatus: ServiceStatus } {
  return { byokServiceStatus: status };
}

/** The status carried by an IPC message, or undefined for any other message. */
export function parseServiceStatus(message: unknown): ServiceStatus | undefined {
  const parsed = envelopeSchema.safeParse(message);
  return parsed.success ? parsed.data.byokServiceStatus : undefined;
}

/** The failure fields of a start-up error (listen errors carry code, address and port). */
export function startFailureOf(err: unknown): { message: string; code?: string; address?: string; port?: number } {
  const e = err as { message?: unknown; code?: unknown; address?: unknown; port?: unknown } | undefined;
  const message = typeof e?.message === "string" ? e.message.split("\n")[0]! : String(err);
  return {
    message,
    ...(typeof e?.code === "string" ? { code: e.code } : {}),
    ...(typeof e?.address === "string" ? { address: e.address } : {}),
    ...(typeof e?.port === "number" ? { port: e.port } : {}),
  };
}
