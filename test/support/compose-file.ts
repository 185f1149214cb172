import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';

const composePath = path.resolve(import.meta.dirname, '../../docker-compose.yml');

/** One `${...}` expression of the compose file. */
export interface ComposeVariable {
  name: string;
  /** `:-` / `-` (default), `:?` / `?` (required), `:+` / `+` (alternative), or none. */
  operator: ':-' | '-' | ':?' | '?' | ':+' | '+' | null;
  argument: string;
}

const EXPRESSION = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?|\?|:\+|\+)([^}]*))?\}/g;

/** The variables a compose file reads, in order of appearance. */
export function composeVariables(text = readFileSync(composePath, 'utf8')): ComposeVariable[] {
  return [...text.replaceAll('$$', '').matchAll(EXPRESSION)].map((match) => ({
    name: match[1]!,
    operator: (match[2] as ComposeVariable['operator']) ?? null,
    argument: match[3] ?? '',
  }));
}

/**
 * Compose's interpolation (https://docs.docker.com/reference/compose-file/interpolation/) of one value against an
 * environment (what `docker compose config` does with the shell and `.env`): `${VAR:?message}` fails when VAR is
 * unset or empty, `${VAR?message}` when unset; `${VAR:-default}` and `${VAR-default}` fall back.
 */
function interpolate(value: string, environment: Record<string, string | undefined>, errors: string[]): string {
  return value
    .replaceAll('$$', '\u0000')
    .replace(EXPRESSION, (_whole, name: string, operator: string | undefined, argument = '') => {
      const current = environment[name];
      const unset = current === undefined;
      const empty = unset || current === '';
      switch (operator) {
        case ':-':
          return empty ? argument : current!;
        case '-':
          return unset ? argument : current;
        case ':?':
          if (empty) errors.push(`required variable ${name} is missing a value: ${argument}`);
          return current ?? '';
        case '?':
          if (unset) errors.push(`required variable ${name} is missing a value: ${argument}`);
          return current ?? '';
        case ':+':
          return empty ? '' : argument;
        case '+':
          return unset ? '' : argument;
        default:
          return current ?? '';
      }
    })
    .replaceAll('\u0000', '$');
}

interface ComposeService {
  environment?: Record<string, string>;
  command?: string[];
}

export interface ComposeConfig {
  services: Record<string, ComposeService>;
  /** What `docker compose config` would stop with (one line per missing required variable). */
  errors: string[];
}

function interpolateAll(node: unknown, environment: Record<string, string | undefined>, errors: string[]): unknown {
  if (typeof node === 'string') return interpolate(node, environment, errors);
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  if (Array.isArray(node)) return node.map((item) => interpolateAll(item, environment, errors));
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [key, interpolateAll(value, environment, errors)]),
    );
  }
  return node;
}

/**
 * `docker compose config` without Docker: the file parsed (YAML merge keys resolved), then every value interpolated
 * against `environment` (the shell plus `.env`), as compose does.
 */
export function composeConfig(environment: Record<string, string | undefined>): ComposeConfig {
  const document = parse(readFileSync(composePath, 'utf8'), { merge: true }) as { services: Record<string, unknown> };
  const errors: string[] = [];
  const services = interpolateAll(document.services, environment, errors) as Record<string, ComposeService>;
  return { services, errors };
}
