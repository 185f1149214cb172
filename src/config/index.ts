export { loadEnv, ConfigError } from './env';
export type { Env } from './env';
