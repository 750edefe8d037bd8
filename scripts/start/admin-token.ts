/**
 * The admin page's token for `npm start`: ADMIN_TOKEN or ADMIN_TOKEN_FILE
 * when the operator set one, else DATA_DIR/admin-token, created on the first
 * start with 32 random bytes (mode 0600) and kept across restarts. Only the
 * admin service gets it (through ADMIN_TOKEN_FILE, so it never sits in a
 * process environment that `ps e` shows).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface AdminTokenSource {
  /** Variables for the admin service. */
  readonly env: Readonly<Record<string, string>>;
  /** Where the operator finds the token (for the ready line); never the token itself. */
  readonly where: string;
}

export function adminTokenSource(env: NodeJS.ProcessEnv, dataDir: string): AdminTokenSource {
  const token = env["ADMIN_TOKEN"];
  if (token) return { env: { ADMIN_TOKEN: token }, where: "from ADMIN_TOKEN" };
  const file = env["ADMIN_TOKEN_FILE"];
  if (file) return { env: { ADMIN_TOKEN_FILE: file }, where: `in ${file}` };
  const path = join(dataDir, "admin-token");
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, `${randomBytes(32).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  }
  return { env: { ADMIN_TOKEN_FILE: path }, where: `in ${path}` };
}
