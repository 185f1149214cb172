import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { LogPort } from '../core/ports';
import { AppError } from '../core/errors/app-error';
import { acknowledged, AtAck, type HandlerContext } from './acknowledged';
import type { TypedSocket } from './socket-types';

const socket = { data: { userId: 'user-1', role: 'user' } } as unknown as TypedSocket;
const schema = z.object({ value: z.number() }).strict();

function setup(run: (context: HandlerContext<z.infer<typeof schema>>) => Promise<object | AtAck<object>>) {
  const log = { error: vi.fn(), warn: vi.fn(), debug: vi.fn(), info: vi.fn() };
  const handler = acknowledged({ event: 'test-event', socket, schema, log: log as unknown as LogPort, run });
  const call = (...args: unknown[]) => new Promise<unknown>((resolve) => handler(...args, resolve));
  return { log, handler, call };
}

describe('acknowledged', () => {
  it('acks ok with the result of a valid payload', async () => {
    const { call } = setup(async ({ payload, userId }) => ({ doubled: payload.value * 2, userId }));
    expect(await call({ value: 21 })).toEqual({ ok: true, doubled: 42, userId: 'user-1' });
  });

  it('answers VALIDATION without running the handler', async () => {
    const run = vi.fn(async () => ({}));
    const { call } = setup(run);
    for (const payload of [{ value: 'x' }, { value: 1, extra: true }, null, 'text']) {
      expect(await call(payload)).toMatchObject({ ok: false, error: { code: 'VALIDATION' } });
    }
    expect(run).not.toHaveBeenCalled();
  });

  it('keeps the code and message of an AppError, with its details', async () => {
    const { call, log } = setup(async () => {
      throw new AppError('RATE_LIMITED', 'Slow down.', { details: { retryAfterSeconds: 7 } });
    });
    expect(await call({ value: 1 })).toEqual({
      ok: false,
      error: { code: 'RATE_LIMITED', message: 'Slow down.', retryAfterSeconds: 7 },
    });
    expect(log.error).not.toHaveBeenCalled();
  });

  it('hides an unexpected error as INTERNAL and logs it', async () => {
    const { call, log } = setup(async () => {
      throw new Error('database password is hunter2');
    });
    const response = await call({ value: 1 });
    expect(response).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'Something went wrong on our side.' } });
    expect(JSON.stringify(response)).not.toContain('hunter2');
    expect(log.error).toHaveBeenCalledOnce();
  });

  it('runs without an ack callback and throws nothing', async () => {
    const run = vi.fn(async () => ({}));
    const failing = setup(async () => {
      throw new Error('boom');
    });
    expect(() => setup(run).handler({ value: 1 })).not.toThrow();
    expect(() => failing.handler({ value: 1 })).not.toThrow();
    expect(() => failing.handler()).not.toThrow();
    await vi.waitFor(() => expect(run).toHaveBeenCalledOnce());
    // The failing run is logged; the missing payload is a validation error, not logged.
    await vi.waitFor(() => expect(failing.log.error).toHaveBeenCalledOnce());
  });

  it('builds an AtAck result right when it answers', async () => {
    let state = 'read';
    const { handler } = setup(async () => {
      state = 'changed after the read';
      return new AtAck(() => ({ state }));
    });
    const response = await new Promise((resolve) => handler({ value: 1 }, resolve));
    expect(response).toEqual({ ok: true, state: 'changed after the read' });
  });
});
