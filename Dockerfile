# syntax=docker/dockerfile:1
# fusion-proxy image: one image for the api and the worker roles (ROLE=api|worker|all).
#   docker build -t fusion-proxy .
#   docker run --rm -p 8080:8080 -e PROXY_PASSWORD=... fusion-proxy      # embedded mode, no Redis
# Base pinned by tag; pin by digest too (node:20.20.2-bookworm-slim@sha256:...) in your registry mirror.
ARG NODE_IMAGE=node:20.20.2-bookworm-slim

# ---- build: all dependencies, compile TypeScript to dist/ (the same commands as .ci/run) ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- deps: production dependencies only ----
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- runtime ----
FROM ${NODE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node (which drains streams and closes BullMQ workers) and
# reaps zombies. Node is not designed to run as PID 1.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
# Files stay owned by root and read-only for the runtime user.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Gives V8 NODE_HEAP_PERCENT (default 75) of the container's memory limit instead of Node's half.
COPY bin/heap-limit.sh ./bin/
# Numeric, so that Kubernetes can verify runAsNonRoot; matches the chart's runAsUser.
USER 10001:10001
# 8080: proxy endpoint and probes (PORT); 9090: /metrics when METRICS_PORT=9090 (the chart sets it).
EXPOSE 8080 9090
ENTRYPOINT ["/usr/bin/tini", "--", "bin/heap-limit.sh", "node", "dist/cli/main.js"]
CMD ["serve"]
