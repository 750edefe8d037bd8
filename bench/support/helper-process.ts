/**
 * A bench/support script (or any Node script) as its own process on a free
 * loopback port: it is started as `node <script> <port> <arg>` and counts as
 * up once it prints its first line on stdout.
 */
import { spawn } from "node:child_process";
import { freePort } from "@byok/local-infra/local-servers";

export interface HelperProcess {
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
}

export async function startHelper(script: string, arg: string): Promise<HelperProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [script, String(port), arg], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
    child.stdout!.once("data", () => resolve());
  });
  return {
    port,
    pid: child.pid as number,
    stop: async () => {
      child.kill("SIGTERM");
      if (child.exitCode === null) await new Promise((resolve) => child.once("exit", resolve));
    },
  };
}
