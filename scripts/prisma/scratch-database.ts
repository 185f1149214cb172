import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** A throw-away database on the server of `adminUrl`; `drop` removes it (and its connections). */
export interface ScratchDatabase {
  name: string;
  url: string;
  drop: () => Promise<void>;
}

/**
 * Creates an empty database with a random name next to the one `adminUrl` points at.
 * `adminUrl` needs the CREATEDB privilege (a superuser URL in tests and local tooling).
 */
export async function createScratchDatabase(adminUrl: string, prefix = 'scratch'): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`.toLowerCase();
  await withAdminClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    drop: () =>
      withAdminClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

/** Runs `body` with a scratch database, dropping it afterwards whatever happens. */
export async function withScratchDatabase<T>(
  adminUrl: string,
  prefix: string,
  body: (database: ScratchDatabase) => Promise<T>,
): Promise<T> {
  const database = await createScratchDatabase(adminUrl, prefix);
  try {
    return await body(database);
  } finally {
    await database.drop();
  }
}

async function withAdminClient<T>(adminUrl: string, body: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await body(client);
  } finally {
    await client.end();
  }
}
