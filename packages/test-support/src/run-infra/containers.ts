/**
 * Postgres and NATS in throwaway containers, through testcontainers (loaded
 * only here, and only when a run needs it). The images are the ones
 * docker-compose.yml runs. Each container is removed when stopped.
 */
import { randomBytes } from "node:crypto";

export interface RunningServer {
  readonly url: string;
  stop(): Promise<void>;
}

const POSTGRES_IMAGE = "postgres:17";
const NATS_IMAGE = "nats:2.10-alpine";

/** True when testcontainers finds a container engine (DOCKER_HOST, the Docker socket, ~/.testcontainers.properties, ...). */
export async function containerEngineAvailable(): Promise<boolean> {
  const { getContainerRuntimeClient } = await import("testcontainers");
  try {
    await getContainerRuntimeClient();
    return true;
  } catch {
    return false;
  }
}

export async function startPostgresContainer(): Promise<RunningServer> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const password = randomBytes(12).toString("hex");
  const container = await new GenericContainer(POSTGRES_IMAGE)
    .withEnvironment({ POSTGRES_PASSWORD: password })
    .withTmpFs({ "/var/lib/postgresql/data": "rw" })
    .withExposedPorts(5432)
    // The image starts the server twice (init scripts, then for real).
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  return {
    url: `postgres://postgres:${password}@${container.getHost()}:${container.getMappedPort(5432)}/postgres`,
    stop: async () => void (await container.stop()),
  };
}

export async function startNatsContainer(): Promise<RunningServer> {
  const { GenericContainer, Wait } = await import("testcontainers");
  const container = await new GenericContainer(NATS_IMAGE).withCommand(["-js"]).withExposedPorts(4222).withWaitStrategy(Wait.forLogMessage(/Server is ready/)).start();
  return {
    url: `nats://${container.getHost()}:${container.getMappedPort(4222)}`,
    stop: async () => void (await container.stop()),
  };
}
