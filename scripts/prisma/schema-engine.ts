import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import {
  bindMigrationAwareSqlAdapterFactory,
  ColumnTypeEnum,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
  type SqlQueryable,
} from '@prisma/driver-adapter-utils';
import * as engineBindings from '@prisma/schema-engine-wasm/schema_engine_bg';
import type { SchemaEngine } from '@prisma/schema-engine-wasm';
import pg from 'pg';

// Prisma's schema engine compiled to wasm (@prisma/schema-engine-wasm, pinned exactly: its JS API is
// undocumented), driven through @prisma/adapter-pg. Developer tooling only; the server never loads it.
// Pitfalls handled here:
// - Node cannot `import` a .wasm file, so the module is instantiated by hand with its JS glue.
// - adapter-pg rejects Postgres "char" columns (oid 18), which the engine's catalog queries read
//   (pg_constraint.contype...): they are handed over as text values typed as characters.
// - adapter-pg's own shadow database is dropped before its pool closes: callers bring their own.
// - adapter-pg's executeScript splits on ';' (breaks $$ bodies): scripts run as one simple query.

export type { SchemaEngine };

const POSTGRES_CHAR_OID = 18;
const POSTGRES_TEXT_OID = 25;

let enginePromise: Promise<typeof engineBindings> | undefined;

/** Loads and starts the wasm module once per process. */
function loadEngineModule(): Promise<typeof engineBindings> {
  enginePromise ??= (async () => {
    const require = createRequire(import.meta.url);
    // The package's exports don't expose the .wasm file itself: locate it next to the entry point.
    const wasmPath = path.join(path.dirname(require.resolve('@prisma/schema-engine-wasm')), 'schema_engine_bg.wasm');
    // The engine reports Rust panics through this global before trapping; keep the message for the error.
    const globals = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(message: string): void } };
    globals.PRISMA_WASM_PANIC_REGISTRY ??= {
      set_message: (message) => {
        lastPanic = message;
      },
    };
    const { instance } = await WebAssembly.instantiate(await readFile(wasmPath), {
      './schema_engine_bg.js': engineBindings,
    });
    engineBindings.__wbg_set_wasm(instance.exports);
    (instance.exports.__wbindgen_start as () => void)();
    return engineBindings;
  })();
  return enginePromise;
}

let lastPanic: string | undefined;

/** Adds the engine's panic message (if any) to an error thrown by a wasm call. */
export function describeEngineError(error: unknown): Error {
  const message = typeof error === 'string' ? error : error instanceof Error ? error.message : JSON.stringify(error);
  const panic = lastPanic;
  lastPanic = undefined;
  return new Error(panic ? `${message}\nschema engine panic: ${panic}` : message, { cause: error });
}

export interface DatabaseTarget {
  /** URL of the database the engine treats as "the datasource". */
  databaseUrl: string;
  /** Creates a fresh shadow database when the engine asks for one; its `drop` runs after its pool closed. */
  createShadowDatabase?: () => Promise<{ url: string; drop: () => Promise<void> }>;
}

/**
 * Starts a schema engine bound to `target` (when given) and runs `body`, then frees the engine
 * and closes every pool it opened.
 */
export async function withSchemaEngine<T>(
  options: { schemaFiles: { path: string; content: string }[]; target?: DatabaseTarget },
  body: (engine: SchemaEngine) => Promise<T>,
): Promise<T> {
  const bindings = await loadEngineModule();
  const adapters = new Set<SqlDriverAdapter>();
  const factory = createAdapterFactory(options.target, adapters);
  const datamodels = options.schemaFiles.map((file): [string, string] => [file.path, file.content]);
  let engine: SchemaEngine;
  try {
    engine = await bindings.SchemaEngine.new({ datamodels }, () => {}, bindMigrationAwareSqlAdapterFactory(factory));
  } catch (error) {
    throw describeEngineError(error);
  }
  try {
    return await body(engine);
  } catch (error) {
    throw describeEngineError(error);
  } finally {
    engine.free();
    // The engine does not always dispose what it connected; idle pools would keep the process alive.
    for (const adapter of adapters) await adapter.dispose();
  }
}

function createAdapterFactory(
  target: DatabaseTarget | undefined,
  open: Set<SqlDriverAdapter>,
): SqlMigrationAwareDriverAdapterFactory {
  const track = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const dispose = adapter.dispose.bind(adapter);
    let disposed = false;
    adapter.dispose = async () => {
      if (disposed) return;
      disposed = true;
      open.delete(adapter);
      await dispose();
    };
    open.add(adapter);
    return adapter;
  };
  return {
    provider: 'postgres',
    adapterName: '@prisma/adapter-pg',
    async connect() {
      if (!target) throw new Error('this schema engine command needs a database, none was given');
      return track(await connectPg(target.databaseUrl));
    },
    async connectToShadowDb() {
      if (!target?.createShadowDatabase)
        throw new Error('this schema engine command needs a shadow database, none was given');
      const shadow = await target.createShadowDatabase();
      const adapter = await connectPg(shadow.url);
      const dispose = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await dispose();
        await shadow.drop();
      };
      return track(adapter);
    },
  };
}

// Results whose "char" columns were retyped to text, by their rows array (which adapter-pg passes through).
const characterColumns = new WeakMap<unknown[], number[]>();

function retypeCharColumns(result: unknown): void {
  for (const single of Array.isArray(result) ? result : [result]) {
    const { fields, rows } = (single ?? {}) as { fields?: { dataTypeID: number }[]; rows?: unknown[] };
    if (!fields || !rows) continue;
    const indexes: number[] = [];
    fields.forEach((field, index) => {
      if (field.dataTypeID === POSTGRES_CHAR_OID) {
        field.dataTypeID = POSTGRES_TEXT_OID;
        indexes.push(index);
      }
    });
    if (indexes.length > 0) characterColumns.set(rows, indexes);
  }
}

/** A pg client that reports "char" columns as text, which adapter-pg can read. */
class CharAsTextClient extends pg.Client {
  // pg's query has a dozen overloads; this wrapper only post-processes whichever result arrives.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    const callbackIndex = args.findIndex((argument) => typeof argument === 'function');
    if (callbackIndex >= 0) {
      const callback = args[callbackIndex] as (error: Error | null, result: unknown) => void;
      args[callbackIndex] = (error: Error | null, result: unknown) => {
        if (!error) retypeCharColumns(result);
        callback(error, result);
      };
      return (super.query as (...a: unknown[]) => unknown)(...args);
    }
    const pending = (super.query as (...a: unknown[]) => unknown)(...args);
    if (pending instanceof Promise) return pending.then((result: unknown) => (retypeCharColumns(result), result));
    return pending;
  }
}

function withCharacterColumnTypes<Q extends SqlQueryable>(queryable: Q): Q {
  const queryRaw = queryable.queryRaw.bind(queryable);
  queryable.queryRaw = async (query) => {
    const resultSet = await queryRaw(query);
    for (const index of characterColumns.get(resultSet.rows) ?? [])
      resultSet.columnTypes[index] = ColumnTypeEnum.Character;
    return resultSet;
  };
  return queryable;
}

async function connectPg(databaseUrl: string): Promise<SqlDriverAdapter> {
  const pool = new pg.Pool({ connectionString: databaseUrl, Client: CharAsTextClient, max: 4 });
  const adapter = withCharacterColumnTypes(await new PrismaPg(pool, { disposeExternalPool: true }).connect());
  const startTransaction = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (isolationLevel) => withCharacterColumnTypes(await startTransaction(isolationLevel));
  adapter.executeScript = async (script) => {
    // One simple query runs the whole script, in one implicit transaction, like Prisma's native engine.
    await pool.query(script);
  };
  return adapter;
}
