/**
 * The parts of infra/haproxy/haproxy.cfg the compose tests need: which port
 * each frontend binds and which compose service:port its backend reaches
 * (`server-template <prefix> <count> <service>:<port>`), and the same
 * configuration rewritten for local processes: frontends on loopback ports,
 * each backend's replicas as static servers, no Docker DNS resolver.
 */
export interface HaproxyFrontend {
  readonly name: string;
  /** Container port it binds (`bind :8080`). */
  readonly port: number;
  readonly backend: string;
}

export interface HaproxyBackend {
  readonly name: string;
  /** The compose service and container port its server-template resolves. */
  readonly service: string;
  readonly port: number;
  /** How many replicas the template can hold. */
  readonly slots: number;
}

export interface HaproxyConfig {
  readonly frontends: readonly HaproxyFrontend[];
  readonly backends: readonly HaproxyBackend[];
}

export function parseHaproxyConfig(text: string): HaproxyConfig {
  const frontends: HaproxyFrontend[] = [];
  const backends: HaproxyBackend[] = [];
  let section: { kind: string; name: string; bind?: number; backend?: string } | undefined;
  const close = (): void => {
    if (section?.kind === "frontend") {
      if (section.bind === undefined || section.backend === undefined) throw new Error(`frontend ${section.name} needs a bind and a default_backend`);
      frontends.push({ name: section.name, port: section.bind, backend: section.backend });
    }
  };
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (line === "") continue;
    const words = line.split(/\s+/);
    if (!raw.startsWith(" ") && !raw.startsWith("\t")) {
      close();
      section = { kind: words[0]!, name: words[1] ?? "" };
      continue;
    }
    if (section?.kind === "frontend" && words[0] === "bind") section.bind = Number(/:(\d+)$/.exec(words[1] ?? "")?.[1]);
    if (section?.kind === "frontend" && words[0] === "default_backend") section.backend = words[1];
    if (section?.kind === "backend" && words[0] === "server-template") {
      const [service, port] = (words[3] ?? "").split(":");
      backends.push({ name: section.name, service: service!, port: Number(port), slots: Number(words[2]) });
    }
  }
  close();
  for (const f of frontends) if (!backends.some((b) => b.name === f.backend)) throw new Error(`frontend ${f.name}: no backend ${f.backend}`);
  return { frontends, backends };
}

/**
 * The configuration for a local haproxy: `frontendPorts` maps a container
 * port to the local port to bind, `replicas` a "service:port" to the local
 * ports of its replicas.
 */
export function localHaproxyConfig(text: string, frontendPorts: ReadonlyMap<number, number>, replicas: ReadonlyMap<string, readonly number[]>): string {
  const out: string[] = [];
  let inResolvers = false;
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    const top = raw !== "" && !raw.startsWith(" ") && !raw.startsWith("\t");
    if (top) inResolvers = line.startsWith("resolvers ");
    if (inResolvers || line === "") continue;
    const words = line.split(/\s+/);
    if (words[0] === "bind") {
      const port = Number(/:(\d+)$/.exec(words[1] ?? "")?.[1]);
      const local = frontendPorts.get(port);
      if (local === undefined) throw new Error(`no local port for frontend port ${port}`);
      out.push(`  bind 127.0.0.1:${local}`);
    } else if (words[0] === "server-template") {
      const target = words[3] ?? "";
      const ports = replicas.get(target);
      if (ports === undefined || ports.length === 0) throw new Error(`server-template ${target}: no such listening service`);
      if (ports.length > Number(words[2])) throw new Error(`server-template ${target} holds ${words[2]} servers, the service has ${ports.length} replicas`);
      ports.forEach((port, i) => out.push(`  server ${words[1]}${i + 1} 127.0.0.1:${port}`));
    } else if (words[0] === "default-server") {
      out.push(`  ${words.filter((w, i) => !(w === "resolvers" || words[i - 1] === "resolvers")).join(" ")}`);
    } else {
      out.push(top ? line : `  ${line}`);
    }
  }
  return `${out.join("\n")}\n`;
}
