import http from 'node:http';

/** One server-sent event as the client saw it, stamped with `performance.now()` when its bytes arrived. */
export interface TimedEvent {
  event: string;
  data: unknown;
  at: number;
}

export interface StreamedTurn {
  sentAt: number;
  events: TimedEvent[];
  status: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1024 });

/** Closes this process' keep-alive connections (none may be in use): the server then holds no connection state. */
export function closeConnections(): void {
  agent.destroy();
}

/** A small JSON client over node:http with a keep-alive agent (less client overhead than fetch). */
export function requestJson<T>(options: {
  baseUrl: string;
  method: string;
  path: string;
  token?: string;
  body?: unknown;
}): Promise<{ status: number; body: T }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const request = http.request(
      `${options.baseUrl}${options.path}`,
      {
        method: options.method,
        agent,
        headers: {
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
        },
      },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({ status: response.statusCode ?? 0, body: (text ? JSON.parse(text) : null) as T });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

/**
 * Sends a message with `Accept: text/event-stream` and collects the turn's events (they mirror the socket events)
 * until the server ends the stream after `turn-end`. `benchId` goes in the `x-bench-id` header so the server's
 * arrival time can be matched.
 */
export function sendStreaming(options: {
  baseUrl: string;
  threadId: string;
  token: string;
  content: string;
  benchId: string;
}): Promise<StreamedTurn> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify({ content: options.content });
    const events: TimedEvent[] = [];
    const sentAt = performance.now();
    const request = http.request(
      `${options.baseUrl}/api/threads/${options.threadId}/messages`,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
          accept: 'text/event-stream',
          authorization: `Bearer ${options.token}`,
          'x-bench-id': options.benchId,
        },
      },
      (response) => {
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          const at = performance.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
            const data = /^data: (.*)$/m.exec(block)?.[1];
            events.push({ event, data: data ? JSON.parse(data) : null, at });
          }
        });
        response.on('end', () => resolve({ sentAt, events, status: response.statusCode ?? 0 }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}
