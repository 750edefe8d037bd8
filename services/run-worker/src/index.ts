export { loadConfig, type RunWorkerConfig } from "./config.ts";
export { startRunWorker, type RunWorker, type RunWorkerOverrides } from "./service.ts";
