/**
 * `npm run admin -- ...` (admin-commands.ts, command-table.ts): finds the gateway
 * (gateway-target.ts), connects to its NATS and runs one command.
 */
import { busNames } from "@byok/contracts";
import { connectNats, loadConfigOrExit, silentLogger } from "@byok/platform";
import { ADMIN_USAGE, parseAdminArgs, runAdminCommand, type CliIo } from "./admin-commands.ts";
import { loadConfig } from "./config.ts";
import { describeTarget, resolveTarget } from "./gateway-target.ts";
import { StoreClient } from "@byok/store-client";

const io: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };
const config = loadConfigOrExit(() => loadConfig(process.env));
const args = parseAdminArgs(process.argv.slice(2));

if (args.kind === "invalid") {
  io.err(`admin: ${args.message}\n${ADMIN_USAGE}\n`);
  process.exit(2);
}
const target = resolveTarget(args, config);
if (args.kind === "help") {
  io.out(`${ADMIN_USAGE}\n\ngateway: ${target.kind === "found" ? describeTarget(target) : target.message}\n`);
  process.exit(0);
}
if (target.kind === "none") {
  io.err(`admin: ${target.message}\n`);
  process.exit(1);
}
const where = describeTarget(target);
let nc;
try {
  nc = await connectNats(target.natsUrl, "admin-cli", silentLogger());
} catch (err) {
  const reason = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
  io.err(`admin: cannot connect to NATS at ${where}: ${reason}\n`);
  process.exit(1);
}
try {
  process.exitCode = await runAdminCommand(args.command, new StoreClient(nc, busNames(target.busPrefix), { timeoutMs: config.storeTimeoutMs }), io, { json: args.json, where });
} finally {
  await nc.close();
}
