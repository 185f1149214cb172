/** Structured logging as the core uses it (pino satisfies it). */
export interface LogPort {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}
