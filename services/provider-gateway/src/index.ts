/** Package entry: the service, its configuration loader, and the accounting and metrics seams the control plane implements. */
export { loadConfig, type ProviderGatewayConfig } from "./config.ts";
export { startProviderGateway, type ProviderGateway, type ProviderGatewayOverrides } from "./service.ts";
export {
  passThroughAccounting,
  type AccountingTicket,
  type AdmissionDecision,
  type CallAccounting,
  type CallAdmission,
  type CallReference,
  type CallUsage,
  type ClientKind,
} from "./accounting/call-accounting.ts";
export { noCallMetrics, type CallEnded, type CallMetrics, type CallPath, type CallStarted } from "./accounting/call-metrics.ts";
