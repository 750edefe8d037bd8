/** What the integration project's global setup provides to every test worker (vitest `inject`). */
declare module "vitest" {
  export interface ProvidedContext {
    /** Admin URL of the run's Postgres (tests create their own databases on it). */
    databaseUrl: string;
    /** The run's NATS (JetStream on). */
    natsUrl: string;
  }
}

export {};
