import { pino, type Logger } from 'pino';

export type { Logger };

/** One structured logger: pretty in a terminal, JSON otherwise. Secrets are redacted wherever they appear. */
export function createLogger(options: { level: string; pretty?: boolean; name?: string }): Logger {
  const pretty = options.pretty ?? Boolean(process.stdout.isTTY);
  return pino({
    level: options.level,
    name: options.name,
    redact: {
      paths: ['*.authorization', '*.headers.authorization', '*.headers.cookie', '*.token', '*.apiKey', '*.password', '*.secret', 'token', 'apiKey'],
      censor: '[redacted]',
    },
    transport: pretty ? { target: 'pino-pretty', options: { colorize: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' } } : undefined,
  });
}
