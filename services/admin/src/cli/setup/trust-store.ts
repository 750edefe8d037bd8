/**
 * Installing the team CA into the OS trust store (Cursor is told to use the
 * system certificates): the command for each OS, whether it needs
 * administrator rights, and the form to print when setup cannot run it.
 *
 * - macOS: `security add-trusted-cert` into the login keychain (no sudo; a
 *   dialog asks for the user's password).
 * - Windows: `certutil -user -addstore Root` (the current user's store).
 * - Debian/Ubuntu: copy to /usr/local/share/ca-certificates, `update-ca-certificates`.
 * - Fedora/RHEL: copy to /etc/pki/ca-trust/source/anchors, `update-ca-trust`.
 */
import { join } from "node:path";

export const CA_FILE_NAME = "byok-gateway-ca.crt";

export interface TrustHost {
  platform: NodeJS.Platform;
  home: string;
  isRoot: boolean;
  /** Which Linux trust tools exist. */
  hasUpdateCaCertificates: boolean;
  hasUpdateCaTrust: boolean;
}

export type TrustPlan =
  | { kind: "commands"; steps: string[][]; needsRoot: boolean; display: string }
  | { kind: "unsupported"; message: string };

function shellQuote(arg: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(arg) ? arg : `"${arg.replace(/(["\\$`])/g, "\\$1")}"`;
}

function display(steps: string[][], sudo: boolean): string {
  return steps.map((s) => `${sudo ? "sudo " : ""}${s.map(shellQuote).join(" ")}`).join(" && ");
}

export function trustPlan(host: TrustHost, caFile: string): TrustPlan {
  switch (host.platform) {
    case "darwin": {
      const steps = [["security", "add-trusted-cert", "-r", "trustRoot", "-p", "ssl", "-k", join(host.home, "Library", "Keychains", "login.keychain-db"), caFile]];
      return { kind: "commands", steps, needsRoot: false, display: display(steps, false) };
    }
    case "win32": {
      const steps = [["certutil", "-user", "-addstore", "Root", caFile]];
      return { kind: "commands", steps, needsRoot: false, display: `${display(steps, false)}   (PowerShell: Import-Certificate -FilePath "${caFile}" -CertStoreLocation Cert:\\CurrentUser\\Root)` };
    }
    case "linux": {
      if (host.hasUpdateCaCertificates) {
        const steps = [["cp", caFile, `/usr/local/share/ca-certificates/${CA_FILE_NAME}`], ["update-ca-certificates"]];
        return { kind: "commands", steps, needsRoot: true, display: display(steps, !host.isRoot) };
      }
      if (host.hasUpdateCaTrust) {
        const steps = [["cp", caFile, `/etc/pki/ca-trust/source/anchors/${CA_FILE_NAME}`], ["update-ca-trust"]];
        return { kind: "commands", steps, needsRoot: true, display: display(steps, !host.isRoot) };
      }
      return { kind: "unsupported", message: `no update-ca-certificates or update-ca-trust here: add ${caFile} to your distribution's trust store` };
    }
    default:
      return { kind: "unsupported", message: `add ${caFile} to this system's trust store (no known command for ${host.platform})` };
  }
}
