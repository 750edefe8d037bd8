# One image for every gateway service; compose picks the service with
# `command: ["node", "services/<service>/src/main.ts"]`. Node 22 runs the
# TypeScript sources directly (type stripping), so there is no build step;
# generated protobuf code is committed.
#
# BASE_IMAGE: any image with Node >= 22.18 and npm in PATH and a `node` user
# (the official node:22 by default; the image test builds on a local one made
# without registry pulls, see infra/podman/base-image.sh).
ARG BASE_IMAGE=node:22
FROM ${BASE_IMAGE}

WORKDIR /app
ENV NODE_ENV=production

# Manifests first so the dependency layer is cached across source changes.
COPY package.json package-lock.json ./
COPY packages/contracts/package.json packages/contracts/
COPY packages/cursor-protocol/package.json packages/cursor-protocol/
COPY packages/model-stream/package.json packages/model-stream/
COPY packages/platform/package.json packages/platform/
COPY packages/store-client/package.json packages/store-client/
COPY packages/run-client/package.json packages/run-client/
COPY packages/resumable-link/package.json packages/resumable-link/
COPY packages/acp-bridge/package.json packages/acp-bridge/
COPY packages/local-infra/package.json packages/local-infra/
COPY packages/test-support/package.json packages/test-support/
COPY services/acp-adapter/package.json services/acp-adapter/
COPY services/admin/package.json services/admin/
COPY services/cursor-adapter/package.json services/cursor-adapter/
COPY services/edge-proxy/package.json services/edge-proxy/
COPY services/provider-gateway/package.json services/provider-gateway/
COPY services/run-worker/package.json services/run-worker/
COPY services/store/package.json services/store/
COPY tests/package.json tests/

# Runtime dependencies of the packages and services only (not the test workspace).
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
      -w packages/contracts -w packages/cursor-protocol -w packages/model-stream -w packages/platform -w packages/store-client -w packages/run-client -w packages/resumable-link \
      -w services/acp-adapter -w services/admin -w services/cursor-adapter -w services/edge-proxy -w services/provider-gateway \
      -w services/run-worker -w services/store \
 && npm cache clean --force

COPY packages packages
COPY services services
COPY prompt prompt
# npm run admin / npm run setup start with the Node version check.
COPY scripts/require-node.mjs scripts/
COPY config/gateway.example.json config/

# The edge proxy keeps its team CA under .data/edge-proxy (a volume in compose).
RUN mkdir -p /app/.data/edge-proxy && chown -R node:node /app/.data
USER node

CMD ["node", "-e", "console.error('choose a service: node services/<store|provider-gateway|run-worker|cursor-adapter|edge-proxy|admin>/src/main.ts'); process.exit(2)"]
