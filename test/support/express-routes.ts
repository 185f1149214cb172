import type { Express } from 'express';

interface Layer {
  rawPath?: unknown;
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: Layer[]; name?: string };
}

/** Joins mount paths, dropping the duplicate and trailing slashes. */
function join(prefix: string, path: string): string {
  const joined = `${prefix}/${path}`.replace(/\/+/g, '/');
  return joined.length > 1 ? joined.replace(/\/$/, '') : joined;
}

function walk(stack: Layer[], prefix: string, into: Set<string>, mountedApps: boolean): void {
  for (const layer of stack) {
    if (layer.route) {
      if (typeof layer.route.path !== 'string') throw new Error(`route with a non-string path under ${prefix}`);
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== '_all') into.add(`${method.toUpperCase()} ${join(prefix, layer.route.path)}`);
      }
    } else if (layer.handle?.stack) {
      const mount = typeof layer.rawPath === 'string' ? layer.rawPath : '/';
      walk(layer.handle.stack, join(prefix, mount), into, mountedApps);
    } else if (mountedApps && layer.handle?.name === 'mounted_app' && typeof layer.rawPath === 'string') {
      // A whole express app mounted here (bull-board): its routes are out of reach, its mount point is not.
      into.add(`GET ${join(prefix, layer.rawPath)}`);
    }
  }
}

/**
 * Every route registered on an express 5 app, as `METHOD /path/{param}` (OpenAPI's path template style), found by
 * walking the router stack through mounted routers. `exclude` drops mounted third-party apps by path prefix;
 * `mountedApps` lists a mounted express app (whose own routes the walk cannot see) as `GET <its mount path>`.
 */
export function expressRoutes(app: Express, options: { exclude?: string[]; mountedApps?: boolean } = {}): string[] {
  const found = new Set<string>();
  const router = (app as unknown as { router: { stack: Layer[] } }).router;
  walk(router.stack, '/', found, options.mountedApps ?? false);
  const exclude = options.exclude ?? [];
  return [...found]
    .map((route) => route.replace(/:(\w+)/g, '{$1}'))
    .filter((route) => !exclude.some((prefix) => route.split(' ')[1]?.startsWith(prefix)))
    .sort();
}
