// Spend limits (issue 35) on real Postgres and Redis: sends refused at acceptance when their worst case cannot fit,
// concurrent sends never passing a limit together, groups, the admin's changes, the period's reset, and the user's
// usage agreeing with the admin's costs.
import { SignJWT } from 'jose';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { SendMessageResponseDto, SpendUsageDto, ThreadDto, MessageDto } from '../../src/shared/api';
import type { CostReportDto, SpendLimitsDto } from '../../src/shared/admin-api';
import { useChatServer, type ChatServer } from '../support/chat-server';
import { echoResponder, lastUserText, replyWithToolCalls, type StubResponder } from '../support/openai-stub';
import { waitFor } from '../support/wait-for';
import { createCostReport } from '../../src/db/cost-report';
import { localDay } from '../../src/core/spend/spend-period';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const PRICES = { 'gpt-4o-mini': { input: 2, cachedInput: 1, output: 8 } };

/** Holds every chat answer while closed, so sends overlap (a held answer keeps its turn's reservation). */
const gate = {
  held: null as Promise<void> | null,
  release: () => {},
  close() {
    this.held = new Promise<void>((resolve) => (this.release = resolve));
  },
  open() {
    this.release();
    this.held = null;
  },
};
/** Holds the first call of the message `alpha` (a tool call, answered by the built-in calculator) while closed. */
const alpha = { ...gate, held: null as Promise<void> | null };
const responder: StubResponder = async (request) => {
  if (lastUserText(request.body) === 'alpha' && !request.body.messages.some((message) => message.role === 'tool')) {
    if (alpha.held) await alpha.held;
    return replyWithToolCalls([{ name: 'calculator', arguments: { expression: '6 * 7' } }]);
  }
  if (lastUserText(request.body) === 'a long answer, stopped')
    return { type: 'text', text: 'word '.repeat(200).trim(), chunkDelayMs: 50 };
  if (gate.held) await gate.held;
  return echoResponder(request);
};

/** The clock of the spend periods (tuning.now): tests move it forward across a reset. */
const clock = { offsetMs: 0, now: () => new Date(Date.now() + clock.offsetMs) };

// A small window keeps a send's worst case (its hold: a full prompt and a full answer) a few thousand tokens.
const server = useChatServer({
  stub: { responder },
  env: {
    CHAT_MODEL: 'gpt-4o-mini',
    MODEL_PRICES: JSON.stringify(PRICES),
    CONTEXT_MAX_INPUT_TOKENS: '3000',
    RESERVED_OUTPUT_TOKENS: '300',
    // No recall slot: every one-message thread's prompt is the same size (what oneTurn measures).
    RECALL_TOKENS: '0',
    // The default of guests (every user of this suite is one): far above anything spent here.
    SPEND_LIMIT_GUEST: '100000000tokens/day',
    // Host-minted tokens name their user's groups in this claim.
    SPEND_LIMIT_GROUP_CLAIM: 'groups',
  },
  app: { tuning: { now: () => clock.now() } },
});

async function json<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return JSON.parse(text) as T;
}

function userKit(chat: ChatServer, user: { userId: string; token: string }) {
  const api = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    chat.app.api(path, { ...init, token: user.token });
  return {
    ...user,
    async thread(title = 'spend'): Promise<ThreadDto> {
      return json<ThreadDto>(await api('/api/threads', { method: 'POST', json: { title } }), 201);
    },
    send(threadId: string, content: string): Promise<Response> {
      return api(`/api/threads/${threadId}/messages`, { method: 'POST', json: { content } });
    },
    async usage(): Promise<SpendUsageDto> {
      return json<SpendUsageDto>(await api('/api/me/usage'), 200);
    },
    async transcript(threadId: string): Promise<MessageDto[]> {
      return (await json<{ messages: MessageDto[] }>(await api(`/api/threads/${threadId}/messages?limit=200`), 200))
        .messages;
    },
  };
}

const admin = (path: string, init: RequestInit & { json?: unknown } = {}) =>
  server.app.api(path, { ...init, token: ADMIN_TOKEN });

async function setUserLimit(userId: string, limit: string): Promise<void> {
  await json(await admin(`/api/admin/spend-limits/users/${userId}`, { method: 'PUT', json: { limit } }), 200);
}

/** What one send holds while it runs, in tokens. */
const hold = () => server.app.application.spend!.holdAmount().tokens;

async function freshUser() {
  return userKit(server, await server.guest());
}

let measured: number | null = null;
/**
 * What one send of a short message to a new thread spends here (its prompt and answer, in tokens), measured once.
 * Its call's reservation (its prompt and an answer at its cap of 300) is about 280 tokens more.
 */
async function oneTurn(): Promise<number> {
  if (measured !== null) return measured;
  const user = await freshUser();
  await setUserLimit(user.userId, `${hold() * 10}tokens/day`);
  expect((await user.send((await user.thread()).id, 'measure 00')).status).toBe(201);
  measured = (await user.usage()).spent;
  return measured;
}

/**
 * A limit for a user who spent `spent`: one more send fits, a second one at the same time does not (even once the
 * first's reservation shrank to its call's worst case), and after the first ended another fits again.
 */
async function roomForOneSend(spent: number): Promise<number> {
  return spent + hold() + (await oneTurn()) + 140;
}

describe('spend limits', () => {
  // A failed test must not leave the answers of the next ones held.
  afterEach(() => gate.open());

  it('two concurrent sends that together pass the limit: exactly one is refused at acceptance, nothing overspent', async () => {
    const user = await freshUser();
    const limit = await roomForOneSend(0);
    await setUserLimit(user.userId, `${limit}tokens/day`);
    const [first, second] = [await user.thread('first'), await user.thread('second')];
    gate.close();
    const sends = [user.send(first.id, 'measure 01'), user.send(second.id, 'measure 02')];
    // The refused one answers at once; the accepted one waits for its held answer.
    const refused = await Promise.race(sends.map((send) => send.then((response) => response)));
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as {
      error: { code: string; message: string; resetsAt: string; limit: string };
    };
    expect(body.error.code).toBe('SPEND_LIMIT_REACHED');
    expect(body.error.message).toContain(`${limit.toLocaleString('en-US')} tokens per day`);
    expect(body.error.message).toContain(body.error.resetsAt);
    expect(body.error.limit).toBe(`${limit}tokens/day`);
    const whileRunning = await user.usage();
    expect(whileRunning.reserved).toBeGreaterThan(0);
    expect(whileRunning.reserved).toBeLessThanOrEqual(hold());
    gate.open();
    const statuses = (await Promise.all(sends)).map((response) => response.status).sort();
    expect(statuses).toEqual([201, 429]);
    // The refused message was never stored.
    const stored = [...(await user.transcript(first.id)), ...(await user.transcript(second.id))];
    expect(stored.filter((message) => message.role === 'user')).toHaveLength(1);
    const after = await user.usage();
    expect(after.reserved).toBe(0);
    expect(after.spent).toBeGreaterThan(0);
    expect(after.spent).toBeLessThanOrEqual(limit);
    expect(after).toMatchObject({ enforced: true, unit: 'tokens', limit, remaining: limit - after.spent });
    // Settled to the real usage, the room for another send is back.
    expect((await user.send(second.id, 'measure 03')).status).toBe(201);
  });

  it('20 concurrent sends across 20 threads near the limit: as many as fit are accepted, spending never passes it', async () => {
    const user = await freshUser();
    const limit = Math.floor(hold() * 3.5);
    await setUserLimit(user.userId, `${limit}tokens/day`);
    const threads = await Promise.all(Array.from({ length: 20 }, (_, index) => user.thread(`t${index}`)));
    gate.close();
    const sends = threads.map((thread, index) => user.send(thread.id, `burst ${index}`));
    let answered = 0;
    for (const send of sends) void send.then(() => (answered += 1));
    const held = () => server.stub.requests.filter((request) => /burst/.test(JSON.stringify(request.body))).length;
    // Every send is either refused or has its answer held (its call made, its reservation shrunk to the call's own
    // worst case, which may have let one more send in).
    await waitFor(() => answered + held() === 20, { timeoutMs: 20_000, what: 'every send refused or held' });
    const during = await user.usage();
    expect(during.spent + during.reserved).toBeLessThanOrEqual(limit);
    const accepted = held();
    expect(accepted).toBeGreaterThanOrEqual(3);
    gate.open();
    const statuses = (await Promise.all(sends)).map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(accepted);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20 - accepted);
    expect(20 - accepted).toBeGreaterThan(10);
    const after = await user.usage();
    expect(after.reserved).toBe(0);
    expect(after.spent).toBeLessThanOrEqual(limit);
    // Sends one after the other until the next one cannot fit: spending stays within the limit all along.
    for (let index = 0; index < 40; index += 1) {
      const response = await user.send(threads[index % 20]!.id, `one more ${index}`);
      const usage = await user.usage();
      expect(usage.spent + usage.reserved).toBeLessThanOrEqual(limit);
      if (response.status === 429) {
        expect(usage.remaining).toBeLessThan(hold());
        return;
      }
      expect(response.status).toBe(201);
    }
  });

  it("a group's limit overrides the default; the user's own overrides the group's; an admin raising it lets the next send through", async () => {
    const user = await freshUser();
    const groupLimit = await roomForOneSend(0);
    await json(
      await admin('/api/admin/spend-limits/groups/interns', {
        method: 'PUT',
        json: { limit: `${groupLimit}tokens/day`, members: [user.userId] },
      }),
      200,
    );
    const usage = await user.usage();
    expect(usage.limit).toBe(groupLimit);
    const thread = await user.thread();
    gate.close();
    const first = user.send(thread.id, 'measure 04');
    await waitFor(async () => (await user.usage()).reserved > 0, { what: 'the first send held' });
    const other = await user.thread('other');
    const refused = await user.send(other.id, 'measure 05');
    expect(refused.status).toBe(429);
    gate.open();
    expect((await first).status).toBe(201);

    // A limit too small for any send: refused; raised by the admin: the next send goes through.
    await setUserLimit(user.userId, '10tokens/day');
    expect((await user.send(other.id, 'too small')).status).toBe(429);
    await setUserLimit(user.userId, `${hold() * 10}tokens/day`);
    expect((await user.send(other.id, 'raised')).status).toBe(201);
    expect((await user.usage()).limit).toBe(hold() * 10);

    const listed = await json<SpendLimitsDto>(await admin('/api/admin/spend-limits'), 200);
    expect(listed.defaults.guest).toBe('100000000tokens/day');
    expect(listed.groups).toContainEqual(
      expect.objectContaining({ name: 'interns', limit: `${groupLimit}tokens/day`, members: [user.userId] }),
    );
    expect(listed.users).toContainEqual(
      expect.objectContaining({ userId: user.userId, limit: `${hold() * 10}tokens/day` }),
    );
    // Removing the user's limit brings the group's back.
    expect((await admin(`/api/admin/spend-limits/users/${user.userId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await user.usage()).limit).toBe(groupLimit);
    const audit = await json<{ entries: { action: string; details: Record<string, unknown> }[] }>(
      await admin('/api/admin/audit?limit=50'),
      200,
    );
    const actions = audit.entries.map((entry) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining(['spend-limit.group-set', 'spend-limit.user-set', 'spend-limit.user-removed']),
    );
  });

  it("a host-minted token's group claim places its user in the named groups, in step with the token", async () => {
    const userId = `host-${Date.now()}`;
    const mint = (groups: unknown) =>
      new SignJWT({ ...(groups === undefined ? {} : { groups }) })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(userId)
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(server.app.authSecret));
    const putGroup = async (name: string, limit: string, members?: string[]) =>
      json(
        await admin(`/api/admin/spend-limits/groups/${name}`, {
          method: 'PUT',
          json: { limit, ...(members ? { members } : {}) },
        }),
        200,
      );
    await putGroup('claim-pro', '700000tokens/day');
    await putGroup('claim-team', '500000tokens/day');
    const limitWith = async (token: string) => (await userKit(server, { userId, token }).usage()).limit;

    expect(await limitWith(await mint(['claim-pro', 'no-such-group']))).toBe(700_000);
    const listed = await json<SpendLimitsDto>(await admin('/api/admin/spend-limits'), 200);
    expect(listed.groups.find((group) => group.name === 'claim-pro')?.members).toEqual([userId]);
    // A token naming other groups moves the user; one naming none takes them out.
    expect(await limitWith(await mint('claim-team'))).toBe(500_000);
    expect(await limitWith(await mint(undefined))).toBeNull();
    // An admin's placement is not the token's to undo; the claim's comes back with a token naming it.
    await putGroup('claim-team', '500000tokens/day', [userId]);
    expect(await limitWith(await mint([]))).toBe(500_000);
    expect(await limitWith(await mint(['claim-pro']))).toBe(700_000);
    // A claim of another shape refuses the token, naming the claim.
    const refused = await server.app.api('/api/me/usage', { token: await mint(42) });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain('groups claim');
  });

  it('a new period starts from nothing: the send refused today goes through after the reset', async () => {
    const user = await freshUser();
    const thread = await user.thread();
    const limit = hold() + 20;
    await setUserLimit(user.userId, `${limit}tokens/day`);
    expect((await user.send(thread.id, 'today')).status).toBe(201);
    const today = await user.usage();
    expect(today.spent).toBeGreaterThan(20);
    const refused = await user.send(thread.id, 'still today');
    expect(refused.status).toBe(429);
    const { error } = (await refused.json()) as { error: { resetsAt: string } };
    expect(error.resetsAt).toBe(today.resetsAt);
    // The clock passes the reset.
    clock.offsetMs += Date.parse(today.resetsAt) - clock.now().getTime() + 1000;
    try {
      const tomorrow = await user.usage();
      expect(tomorrow.periodStart > today.periodStart).toBe(true);
      expect(tomorrow.spent).toBe(0);
      expect((await user.send(thread.id, 'tomorrow')).status).toBe(201);
      expect((await user.usage()).spent).toBeGreaterThan(0);
    } finally {
      clock.offsetMs = 0;
    }
  });

  it("the user's usage agrees with the admin's costs, in money and in tokens", async () => {
    const user = await freshUser();
    await setUserLimit(user.userId, '5/day');
    const thread = await user.thread();
    for (const text of ['What is the capital of France?', 'And of Portugal?', 'Thanks.'])
      expect((await user.send(thread.id, text)).status).toBe(201);
    const money = await user.usage();
    expect(money).toMatchObject({ unit: 'money', limit: 5, reserved: 0 });
    const costs = await json<CostReportDto>(await admin('/api/admin/costs?by=user&limit=500'), 200);
    const row = costs.rows.find((entry) => entry.key === user.userId)!;
    expect(row.cost).not.toBeNull();
    expect(money.spent).toBeCloseTo(row.cost!, 12);
    // Each user's effective limit beside their costs (the admin panel's "Limit" column).
    expect(row.limit).toBe('5/day');
    await setUserLimit(user.userId, '1000000tokens/day');
    const tokens = await user.usage();
    // The stub reports no cached tokens: input plus output.
    expect(row.cachedTokens).toBe(0);
    expect(tokens.spent).toBe(row.promptTokens + row.completionTokens);
  });

  it('an answer stopped mid-stream is counted, prompt and the answer as far as it went, as the admin costs count it', async () => {
    const user = await freshUser();
    await setUserLimit(user.userId, '1000000tokens/day');
    const thread = await user.thread();
    const sent = user.send(thread.id, 'a long answer, stopped');
    const answerSoFar = async () =>
      (await user.transcript(thread.id)).find((message) => message.role === 'assistant')?.content ?? '';
    await waitFor(async () => (await answerSoFar()).length > 20, { what: 'the answer streaming' });
    const stop = await server.app.api(`/api/threads/${thread.id}/cancel`, { method: 'POST', token: user.token });
    expect(stop.status).toBeLessThan(300);
    expect((await json<SendMessageResponseDto>(await sent, 201)).turn.status).toBe('cancelled');
    const answer = (await user.transcript(thread.id)).at(-1)!;
    expect(answer.status).toBe('cancelled');
    expect(answer.content.length).toBeGreaterThan(20);
    const usage = await user.usage();
    const costs = await json<CostReportDto>(await admin('/api/admin/costs?by=user&limit=500'), 200);
    const row = costs.rows.find((entry) => entry.key === user.userId)!;
    // The call is in the costs with the partial answer's tokens, and the user's spending is the same figure.
    expect(row.calls).toBe(1);
    expect(row.completionTokens).toBeGreaterThan(0);
    expect(row.completionTokens).toBeLessThan(200);
    expect(usage.spent).toBe(row.promptTokens + row.completionTokens);
    expect(usage.reserved).toBe(0);
  });

  it("a turn's later call that no longer fits ends the turn with SPEND_LIMIT_REACHED instead of overspending", async () => {
    const user = await freshUser();
    const thread = await user.thread();
    // Room for the first send and, once its call shrank its reservation to that call's worst case, for a second send
    // queued behind it; then not for the first turn's second call (after its tool round) beside the second's hold.
    const limit = hold() + (await oneTurn()) + 580;
    await setUserLimit(user.userId, `${limit}tokens/day`);
    alpha.close();
    const first = user.send(thread.id, 'alpha');
    await waitFor(() => server.stub.requests.some((request) => lastUserText(request.body) === 'alpha'), {
      what: "alpha's first call",
    });
    const second = user.send(thread.id, 'measure 06');
    await waitFor(async () => (await user.usage()).reserved > hold(), { what: 'the second send held behind it' });
    alpha.open();
    const ended = await json<SendMessageResponseDto>(await first, 201);
    expect(ended.turn.status).toBe('error');
    expect(ended.turn.error?.code).toBe('SPEND_LIMIT_REACHED');
    expect(ended.turn.error?.message).toContain(`${limit.toLocaleString('en-US')} tokens per day`);
    // The calculator ran; its result never reached the model (no second call of the turn was made).
    expect(server.stub.requests.filter((request) => lastUserText(request.body) === 'alpha')).toHaveLength(1);
    expect(ended.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect((await json<SendMessageResponseDto>(await second, 201)).turn.status).toBe('complete');
    const after = await user.usage();
    expect(after.reserved).toBe(0);
    expect(after.spent).toBeLessThanOrEqual(limit);
    const metrics = await (await server.app.api('/metrics', { token: ADMIN_TOKEN })).text();
    expect(metrics).toMatch(/chat_spend_refusals_total\{reason="user",stage="call"\} [1-9]/);
  });

  it('a fold of a user who can no longer send waits for the reset, then runs', async () => {
    const user = await freshUser();
    const thread = await user.thread();
    // Room for one send: after it, what is left is less than a send holds, so no turn can come before the reset and
    // no fold is needed before it.
    await setUserLimit(user.userId, `${hold() + 20}tokens/day`);
    expect((await user.send(thread.id, 'measure 07')).status).toBe(201);
    const before = await user.usage();
    expect(before.remaining ?? Infinity).toBeLessThan(before.perSend ?? 0);
    const jobId = await server.app.application.folds.enqueueFold(thread.id, 'trigger fired');
    const job = await server.app.application.folds.queue.getJob(jobId!);
    await waitFor(async () => (await job!.getState()) === 'delayed', { what: 'the fold deferred' });
    const deferred = await server.app.application.folds.queue.getJob(jobId!);
    expect(deferred!.timestamp + deferred!.delay).toBeGreaterThanOrEqual(Date.parse(before.resetsAt) - 1000);
    expect((await user.usage()).spent).toBe(before.spent);
    // The reset passes (the spend clock; the queue's own delay is promoted rather than waited out).
    clock.offsetMs += Date.parse(before.resetsAt) - clock.now().getTime() + 1000;
    try {
      await deferred!.promote();
      await waitFor(async () => ['completed', 'unknown'].includes(await deferred!.getState()), {
        what: 'the fold run after the reset',
      });
    } finally {
      clock.offsetMs = 0;
    }
  });

  it("erasure takes the user's limit, memberships, spending and reservations with them", async () => {
    const user = await freshUser();
    await setUserLimit(user.userId, `${hold() * 10}tokens/day`);
    await json(
      await admin('/api/admin/spend-limits/groups/erased', {
        method: 'PUT',
        json: { limit: null, members: [user.userId] },
      }),
      200,
    );
    expect((await user.send((await user.thread()).id, 'measure 07')).status).toBe(201);
    await server.app.application.spend!.hold({ userId: user.userId });
    expect((await user.usage()).reserved).toBe(hold());
    const client = new pg.Client({ connectionString: server.app.databaseUrl });
    await client.connect();
    try {
      const count = async () =>
        (
          await client.query<{ n: number }>(
            `SELECT (SELECT count(*) FROM spend_limits WHERE user_id = $1) + (SELECT count(*) FROM spend_group_members WHERE user_id = $1)
              + (SELECT count(*) FROM spend_reservations WHERE user_id = $1) + (SELECT count(*) FROM spend_days WHERE account = 'user:' || $1)
              + (SELECT count(*) FROM spend_accounts WHERE account = 'user:' || $1) AS n`,
            [user.userId],
          )
        ).rows[0]!.n;
      expect(Number(await count())).toBeGreaterThanOrEqual(5);
      expect((await server.app.api('/api/me', { method: 'DELETE', token: user.token })).status).toBe(204);
      expect(Number(await count())).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('the costs by day follow the days of the spend time zone', async () => {
    const user = await freshUser();
    await setUserLimit(user.userId, `${hold() * 10}tokens/day`);
    expect((await user.send((await user.thread()).id, 'measure 08')).status).toBe(201);
    const now = new Date();
    // UTC+14 and UTC-11: at any moment at least one of them is on another date than UTC.
    for (const timeZone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'UTC']) {
      const report = createCostReport(server.app.application.db, { timeZone });
      const { groups } = await report.usageBy({
        by: 'day',
        since: new Date(now.getTime() - 3 * 86_400_000),
        limit: 10,
      });
      expect(groups.map((group) => group.key)).toContain(localDay(now, timeZone));
      expect(groups.every((group) => group.key <= localDay(now, timeZone))).toBe(true);
    }
  });

  it('a reservation its turn left behind (the process died) is released by the sweeper', async () => {
    const user = await freshUser();
    await setUserLimit(user.userId, `${hold() * 4}tokens/day`);
    const thread = await user.thread();
    const sent = await json<SendMessageResponseDto>(await user.send(thread.id, 'ended'), 201);
    // As a turn that crashed between its reservation and its settling would leave it: held, its turn over.
    await server.app.application.spend!.reserveCall({
      turnId: sent.turn.id,
      userId: user.userId,
      model: 'gpt-4o-mini',
      promptTokens: 1000,
    });
    expect((await user.usage()).reserved).toBe(1300);
    await waitFor(async () => (await user.usage()).reserved === 0, {
      timeoutMs: 10_000,
      what: 'the sweeper releasing it',
    });
  });
});
