import type { ModelPrices } from '../costs/estimate-costs';
import { AppError } from '../errors/app-error';
import type { LogPort } from '../ports';
import type { SpendAccountLimit, SpendStore } from '../ports/spend-store';
import { resolveSpendLimit, type SpendLimitSource } from '../spend/resolve-spend-limit';
import {
  amountIn,
  describeSpendLimit,
  formatSpendLimit,
  type SpendAmount,
  type SpendLimit,
} from '../spend/spend-limit';
import { spendOfCall, worstCaseOf, type RecordedCallFigures } from '../spend/spend-of-call';
import { serviceKeyOf } from '../spend/service-key-of';
import { localDay, periodResetsAt, periodStartDay, periodStarts } from '../spend/spend-period';

/**
 * Why a send or a call was refused, for the refusal counter: the source of the limit it met, a guests' address, or
 * the service key whose end users together met its limit.
 */
export type SpendRefusalReason = SpendLimitSource['kind'] | 'address' | 'service-key';

/** Whose limit a refusal names: the user's own, their address's guests', or their service key's end users'. */
type RefusalScope = 'user' | 'address' | 'service-key';

export interface SpendGateOptions {
  store: SpendStore;
  prices: ModelPrices;
  /** SPEND_LIMIT_USER, SPEND_LIMIT_GUEST, SPEND_LIMIT_GUESTS_PER_ADDRESS. */
  defaults: { user: SpendLimit | null; guest: SpendLimit | null; guestsPerAddress: SpendLimit | null };
  timeZone: string;
  /** The chat model: its price is a send's hold and ranks token limits against money limits. */
  chatModel: string;
  /** A chat call's largest prompt (the pack budget) and answer cap: a send's hold is a call of both. */
  holdPromptTokens: number;
  answerCap: number;
  /** The provider bills prompt cache writes (Anthropic): a worst case writes its whole prompt, at the write price. */
  writesCache?: boolean;
  /** How long an unclaimed hold lasts (a queued turn waits behind others); a call's reservation lasts `callTtlMs`. */
  holdTtlMs: number;
  callTtlMs: number;
  log: LogPort;
  now?: () => Date;
  onRefused?: (reason: SpendRefusalReason, stage: 'send' | 'call') => void;
}

/** What /api/me/usage answers: the user's spending in the current period of their effective limit. */
export interface SpendUsage {
  unit: SpendLimit['unit'];
  spent: number;
  reserved: number;
  /** Null: no limit applies (spending is still counted, by day). */
  limit: number | null;
  remaining: number | null;
  period: SpendLimit['period'];
  periodStart: string;
  resetsAt: string;
  /** The limit as settings write it (`0.5/day`), null without one. */
  written: string | null;
  /** What one more send holds (its worst case), in `unit`. */
  perSend: number;
}

const ADDRESS = 'address:';
const USER = 'user:';
const SERVICE_KEY = 'service-key:';

const scopeOf = (account: string): RefusalScope =>
  account.startsWith(ADDRESS) ? 'address' : account.startsWith(SERVICE_KEY) ? 'service-key' : 'user';

/** What the gate's steps share: its options and what it derives from them once. */
interface GateContext {
  options: SpendGateOptions;
  now: () => Date;
  /** The chat model's input price per token, null when it has none (token limits are not converted). */
  moneyPerToken: number | null;
  /** What one send holds: the worst case of its first call. */
  holdAmount: SpendAmount;
}

async function effectiveLimit(gate: GateContext, userId: string) {
  const stored = await gate.options.store.limitsOf(userId, serviceKeyOf(userId));
  const resolved = resolveSpendLimit({
    userKind: stored.userKind ?? 'external',
    user: stored.user,
    groups: stored.groups,
    defaults: gate.options.defaults,
    moneyPerToken: gate.moneyPerToken,
  });
  return {
    resolved,
    userKind: stored.userKind ?? 'external',
    address: stored.address,
    serviceKey: stored.serviceKey,
  };
}

function refusal(gate: GateContext, input: { limit: SpendLimit; scope: RefusalScope; at: Date }): AppError {
  const resetsAt = periodResetsAt(input.limit.period, input.at, gate.options.timeZone);
  const whose =
    input.scope === 'address'
      ? "The guests of your network's"
      : input.scope === 'service-key'
        ? "Your application's (all its users together)"
        : 'Your';
  return new AppError(
    'SPEND_LIMIT_REACHED',
    `${whose} spend limit of ${describeSpendLimit(input.limit)} is reached; it resets at ${resetsAt.toISOString()}.`,
    { details: { limit: formatSpendLimit(input.limit), scope: input.scope, resetsAt: resetsAt.toISOString() } },
  );
}

/** The accounts a user's spending counts against (their own, their address's guests', their service key's), or null. */
async function accountsOf(
  gate: GateContext,
  userId: string,
): Promise<{
  accounts: SpendAccountLimit[];
  sources: Map<string, SpendRefusalReason>;
} | null> {
  const { resolved, userKind, address, serviceKey } = await effectiveLimit(gate, userId);
  const perAddress = userKind === 'guest' && address !== null ? gate.options.defaults.guestsPerAddress : null;
  const keyId = serviceKeyOf(userId);
  if (!resolved && !perAddress && !serviceKey) return null;
  const accounts: SpendAccountLimit[] = [{ account: USER + userId, limit: resolved?.limit ?? null }];
  const sources = new Map<string, SpendRefusalReason>([[USER + userId, resolved?.source.kind ?? 'default']]);
  if (perAddress) {
    accounts.push({ account: ADDRESS + address, limit: perAddress });
    sources.set(ADDRESS + address, 'address');
  }
  if (serviceKey && keyId) {
    // Every end user of the key spends from its account as well: the key's limit covers them together.
    accounts.push({ account: SERVICE_KEY + keyId, limit: serviceKey });
    sources.set(SERVICE_KEY + keyId, 'service-key');
  }
  return { accounts, sources };
}

/** SpendGate.hold: a send's hold, or null when no limit applies; throws SPEND_LIMIT_REACHED when it does not fit. */
async function holdSend(gate: GateContext, input: { userId: string }): Promise<string | null> {
  const { options } = gate;
  const at = gate.now();
  const found = await accountsOf(gate, input.userId);
  if (!found) return null;
  const id = globalThis.crypto.randomUUID();
  const outcome = await options.store.reserve({
    id,
    userId: input.userId,
    turnId: null,
    accounts: found.accounts,
    starts: periodStarts(at, options.timeZone),
    amount: gate.holdAmount,
    expiresAt: new Date(at.getTime() + options.holdTtlMs),
  });
  if (outcome.outcome === 'refused') {
    options.onRefused?.(found.sources.get(outcome.account) ?? 'default', 'send');
    throw refusal(gate, { limit: outcome.limit, scope: scopeOf(outcome.account), at });
  }
  return id;
}

/** SpendGate.reserveCall: whether the turn now holds a reservation for the call; throws SPEND_LIMIT_REACHED. */
async function reserveChatCall(
  gate: GateContext,
  input: { turnId: string; userId: string; model: string; promptTokens: number },
): Promise<boolean> {
  const { options } = gate;
  const at = gate.now();
  const base = {
    id: globalThis.crypto.randomUUID(),
    userId: input.userId,
    turnId: input.turnId,
    starts: periodStarts(at, options.timeZone),
    amount: worstCaseOf(
      {
        model: input.model,
        promptTokens: input.promptTokens,
        answerCap: options.answerCap,
        writesCache: options.writesCache ?? false,
      },
      options.prices,
    ),
    expiresAt: new Date(at.getTime() + options.callTtlMs),
  };
  let outcome = await options.store.reserve({ ...base, accounts: null });
  let sources: Map<string, SpendRefusalReason> | null = null;
  if (outcome.outcome === 'missing') {
    const found = await accountsOf(gate, input.userId);
    if (!found) return false;
    sources = found.sources;
    outcome = await options.store.reserve({ ...base, accounts: found.accounts });
  }
  if (outcome.outcome === 'refused') {
    const scope = scopeOf(outcome.account);
    // The turn's reservation names its accounts, not where their limits came from: read it (a refusal is rare).
    const reason =
      sources?.get(outcome.account) ??
      (scope === 'user' ? ((await effectiveLimit(gate, input.userId)).resolved?.source.kind ?? 'default') : scope);
    options.onRefused?.(reason, 'call');
    throw refusal(gate, { limit: outcome.limit, scope, at });
  }
  return true;
}

/** SpendGate.usageOf: the user's spending in the current period of their effective limit (a day when none applies). */
async function spendUsageOf(gate: GateContext, userId: string): Promise<SpendUsage> {
  const { options } = gate;
  const at = gate.now();
  const { resolved } = await effectiveLimit(gate, userId);
  const limit = resolved?.limit ?? null;
  const period = limit?.period ?? 'day';
  const unit = limit?.unit ?? (gate.moneyPerToken !== null ? 'money' : 'tokens');
  const periodStart = periodStartDay(period, at, options.timeZone);
  const usage = await options.store.usage(USER + userId, periodStart);
  const spent = amountIn(unit, usage.spent);
  const reserved = amountIn(unit, usage.reserved);
  return {
    unit,
    spent,
    reserved,
    limit: limit?.amount ?? null,
    remaining: limit ? Math.max(0, limit.amount - spent - reserved) : null,
    period,
    periodStart,
    resetsAt: periodResetsAt(period, at, options.timeZone).toISOString(),
    written: limit ? formatSpendLimit(limit) : null,
    perSend: amountIn(unit, gate.holdAmount),
  };
}

/**
 * Spend limits (issue 35): a send holds its worst case at acceptance (refused with SPEND_LIMIT_REACHED when it cannot
 * fit, before its message is stored), each chat call of a turn reserves its own worst case before it is made (claiming
 * the send's hold) and settles to what its model_calls row records after; background calls (folds, titles, condensing)
 * are counted, never refused.
 */
export function createSpendGate(options: SpendGateOptions) {
  const { store, prices } = options;
  const gate: GateContext = {
    options,
    now: options.now ?? (() => new Date()),
    moneyPerToken: prices[options.chatModel] ? prices[options.chatModel]!.input / 1_000_000 : null,
    holdAmount: worstCaseOf(
      {
        model: options.chatModel,
        promptTokens: options.holdPromptTokens,
        answerCap: options.answerCap,
        writesCache: options.writesCache ?? false,
      },
      prices,
    ),
  };

  return {
    /** What one send holds while it runs: the worst case of its first call. */
    holdAmount: (): SpendAmount => ({ ...gate.holdAmount }),

    /**
     * A send's hold, taken before its message is stored: the worst case of its first call (a full prompt and a full
     * answer). Null when no limit applies to the user. Throws SPEND_LIMIT_REACHED when it does not fit.
     */
    hold(input: { userId: string }): Promise<string | null> {
      return holdSend(gate, input);
    },

    /** Remembers the address a guest session was made from: all its guests share SPEND_LIMIT_GUESTS_PER_ADDRESS. */
    async guestCreated(userId: string, address: string): Promise<void> {
      if (options.defaults.guestsPerAddress) await store.rememberGuestAddress(userId, address);
    },

    /** Gives back a hold whose send was not stored (refused later, or a repeated clientMessageId). */
    async releaseHold(id: string): Promise<void> {
      try {
        await store.release({ id });
      } catch (error) {
        // It expires (holdTtlMs); the refusal or answer that led here stays what the caller sees.
        options.log.warn({ err: error }, 'could not give back a spend hold');
      }
    },

    /**
     * Reserves a chat call's worst case (its prompt, an answer at its cap) before it is made. Whether the turn now
     * holds a reservation (false: no limit applies). Throws SPEND_LIMIT_REACHED when it does not fit.
     */
    reserveCall(input: { turnId: string; userId: string; model: string; promptTokens: number }): Promise<boolean> {
      return reserveChatCall(gate, input);
    },

    /**
     * Counts a call's spending from the figures its model_calls row records, releasing what the turn's reservation held
     * for it (no turn: background work, counted on the owner). A failure is logged: it never fails the turn.
     */
    async settleCall(input: {
      turnId: string | null;
      userId: string | null;
      /** For a call of no known user: its thread's owner pays. */
      threadId?: string | null;
      call: RecordedCallFigures;
    }): Promise<void> {
      try {
        await store.settle({
          turnId: input.turnId,
          userId: input.userId,
          threadId: input.threadId ?? null,
          day: localDay(gate.now(), options.timeZone),
          amount: spendOfCall(input.call, prices),
        });
      } catch (error) {
        options.log.warn({ err: error, turnId: input.turnId }, 'could not count a model call against its spend limit');
      }
    },

    /** Releases what the turn still holds (its end); the sweeper does it for a turn whose process died. */
    async endTurn(turnId: string): Promise<void> {
      try {
        await store.release({ turnId });
      } catch (error) {
        options.log.warn({ err: error, turnId }, 'could not release the spend reservation of a turn');
      }
    },

    /** Releases up to `limit` expired reservations and those of ended turns; how many (the sweeper's step). */
    releaseStale(limit = 500): Promise<number> {
      return store.release({ stale: limit });
    },

    /** The user's effective limit as settings write it (`0.5/day`), null when none applies (the admin's costs). */
    async writtenLimitOf(userId: string): Promise<string | null> {
      const { resolved } = await effectiveLimit(gate, userId);
      return resolved ? formatSpendLimit(resolved.limit) : null;
    },

    /**
     * When a fold of the user's thread should run instead of now: the reset of their limit's period while they cannot
     * send (what is left is less than one send holds), null otherwise. A fold only serves the thread's next turns, and
     * none can come before the reset, so its spending waits for the period it serves; a fold already running is never
     * stopped.
     */
    async foldDeferredUntil(userId: string): Promise<Date | null> {
      const usage = await this.usageOf(userId);
      if (usage.remaining === null || usage.remaining >= usage.perSend) return null;
      return new Date(usage.resetsAt);
    },

    /** The user's spending in the current period of their effective limit (a day when none applies). */
    usageOf(userId: string): Promise<SpendUsage> {
      return spendUsageOf(gate, userId);
    },
  };
}

export type SpendGate = ReturnType<typeof createSpendGate>;

/** The worst case a spend amount stands for, for logs and tests. */
export function describeAmount(amount: SpendAmount): string {
  return `${amount.money.toFixed(6)} / ${Math.round(amount.tokens)} tokens`;
}
