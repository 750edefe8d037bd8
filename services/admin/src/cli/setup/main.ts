/** `npm run setup -- ...` (setup-command.ts) on a member's machine. */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { resolve } from "node:path";
import { readLocalGateway } from "@byok/platform/local-gateway";
import { runSetup, type SetupHost } from "./setup-command.ts";

const REPO_DATA_DIR = resolve(import.meta.dirname, "../../../../../.data");
const onPath = (command: string): boolean => ["/usr/sbin", "/usr/bin", "/sbin", "/bin", ...(process.env["PATH"] ?? "").split(":")].some((d) => d !== "" && existsSync(`${d}/${command}`));

const host: SetupHost = {
  platform: process.platform,
  home: homedir(),
  env: process.env,
  isRoot: process.getuid?.() === 0,
  hasUpdateCaCertificates: onPath("update-ca-certificates"),
  hasUpdateCaTrust: onPath("update-ca-trust"),
  localGateway: () => readLocalGateway(process.env["DATA_DIR"] ? resolve(process.env["DATA_DIR"]) : REPO_DATA_DIR),
  run: (argv) => {
    execFileSync(argv[0]!, argv.slice(1), { stdio: "inherit" });
  },
};

process.exitCode = await runSetup(process.argv.slice(2), host, { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
