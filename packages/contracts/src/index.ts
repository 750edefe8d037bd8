export * from "./subjects.ts";
export * from "./store-api.ts";
export * from "./gen/byok/v1/history_pb.js";
export * from "./gen/byok/v1/model_pb.js";
export * from "./gen/byok/v1/run_pb.js";
export * from "./gen/byok/v1/store_pb.js";
