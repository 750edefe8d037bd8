/**
 * The handlers of the audit and retention operations (audit.proto):
 * audit.list and retention.purge. operations.ts merges them with the others.
 */
import type pg from "pg";
import type { OperationHandler } from "../operations.ts";
import { ok, reject } from "../outcome.ts";
import type { RetentionJob } from "../retention/retention-job.ts";
import { listAudit } from "./audit-log.ts";

export type AuditOperation = "listAudit" | "purgeContent";

export type AuditHandlers = { [K in AuditOperation]: OperationHandler<K> };

export function createAuditHandlers(pool: pg.Pool, retention: Pick<RetentionJob, "runNow">): AuditHandlers {
  return {
    listAudit: async (req) => {
      const rows = await listAudit(pool, {
        since: req.since,
        until: req.until,
        actionPrefix: req.actionPrefix,
        memberId: req.memberId,
        limit: req.limit,
        beforeId: req.beforeId,
      });
      if (rows.kind !== "ok") return rows;
      return ok({
        entries: rows.value.map((r) => ({
          id: r.id,
          at: r.at.toISOString(),
          action: r.action,
          actor: r.actor,
          memberId: r.memberId,
          teamId: r.teamId,
          keyId: r.keyId,
          runId: r.runId,
          modelId: r.modelId,
          detailsJson: JSON.stringify(r.details),
        })),
      });
    },

    purgeContent: async () => {
      const counts = await retention.runNow();
      // Another store replica holds the retention lock: its pass covers this request.
      if (counts === undefined) return reject("not_active", "a retention pass is already running (another store replica); try again when it ends");
      return ok({ purge: counts });
    },
  };
}
