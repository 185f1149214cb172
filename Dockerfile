# syntax=docker/dockerfile:1
# Multi-stage: a build stage with every dependency (Prisma client generation, the web build), a stage with the
# production dependencies only, and a slim runtime that runs as the unprivileged `node` user.
# Build: docker build -t split-context-chat .   Run: see docker-compose.yml (serve and worker use this image).

FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts ./scripts
# postinstall generates the Prisma client (src/db/generated) with the dev dependency `prisma`.
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run db:generate && npm run build:web --if-present && mkdir -p web

FROM node:22-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# No scripts: postinstall needs the Prisma CLI (a dev dependency); the generated client comes from the build stage.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:22-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=3000 \
    DATA_DIR=/app/.data
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/package.json /app/tsconfig.json /app/prisma.config.ts ./
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/src ./src
# The browser app, when the web part built one (an empty directory otherwise).
COPY --from=build /app/web ./web
RUN mkdir -p /app/.data && chown node:node /app/.data
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1)).catch(()=>process.exit(1))"
# `serve` (HTTP + sockets) by default; the worker service runs `worker`. Exec form: node is PID 1 and gets SIGTERM.
CMD ["node", "--import", "tsx", "src/app/main.ts", "serve"]
