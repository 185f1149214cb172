#!/bin/sh
# Stand-in for Prisma's native schema engine, which the CLI would download (impossible offline).
# `prisma generate` never calls it. Anything that does (migrate, db push, diff) must use
# `npm run db:migration` (scripts/prisma/create-migration.ts) / the server's own migrator
# (src/db/migrate.ts) instead, so fail loudly rather than apply nothing.
echo "prisma: the native schema engine is not available here; use 'npm run db:migration' (see README, Migrations)." >&2
exit 1
