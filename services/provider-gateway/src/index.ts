/** Package entry: the service and its configuration loader. */
export { loadConfig, type ProviderGatewayConfig } from "./config.ts";
export { startProviderGateway, type ProviderGateway, type ProviderGatewayOverrides } from "./service.ts";
