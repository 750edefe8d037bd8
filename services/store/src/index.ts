export { loadConfig, type StoreConfig } from "./config.ts";
export { startStore, type RunningStore, type StoreOverrides } from "./service.ts";
