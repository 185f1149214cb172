-- CreateTable
CREATE TABLE "spend_groups" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spend_groups_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spend_group_members" (
    "group_id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spend_group_members_pkey" PRIMARY KEY ("group_id","user_id")
);

-- CreateTable
CREATE TABLE "spend_limits" (
    "id" UUID NOT NULL,
    "user_id" TEXT,
    "group_id" UUID,
    "amount" DOUBLE PRECISION NOT NULL,
    "unit" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spend_limits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spend_accounts" (
    "account" TEXT NOT NULL,
    "reserved_money" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "reserved_tokens" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "spend_accounts_pkey" PRIMARY KEY ("account")
);

-- CreateTable
CREATE TABLE "spend_days" (
    "account" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "spent_money" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "spent_tokens" DOUBLE PRECISION NOT NULL DEFAULT 0,

    CONSTRAINT "spend_days_pkey" PRIMARY KEY ("account","day")
);

-- CreateTable
CREATE TABLE "spend_reservations" (
    "id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "turn_id" UUID,
    "accounts" TEXT[],
    "limit_amounts" DOUBLE PRECISION[],
    "limit_units" TEXT[],
    "limit_periods" TEXT[],
    "money" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "tokens" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spend_reservations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "spend_guest_addresses" (
    "user_id" TEXT NOT NULL,
    "address" TEXT NOT NULL,

    CONSTRAINT "spend_guest_addresses_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "spend_groups_name_key" ON "spend_groups"("name");

-- CreateIndex
CREATE INDEX "spend_group_members_user_id_idx" ON "spend_group_members"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "spend_limits_user_id_key" ON "spend_limits"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "spend_limits_group_id_key" ON "spend_limits"("group_id");

-- CreateIndex
CREATE UNIQUE INDEX "spend_reservations_turn_id_key" ON "spend_reservations"("turn_id");

-- CreateIndex
CREATE INDEX "spend_reservations_user_id_created_at_idx" ON "spend_reservations"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "spend_reservations_expires_at_idx" ON "spend_reservations"("expires_at");

-- AddForeignKey
ALTER TABLE "spend_group_members" ADD CONSTRAINT "spend_group_members_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "spend_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "spend_limits" ADD CONSTRAINT "spend_limits_group_id_fkey" FOREIGN KEY ("group_id") REFERENCES "spend_groups"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "spend_guest_addresses" ADD CONSTRAINT "spend_guest_addresses_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A reserved amount after additions and subtractions of the same floating-point figures: what rounding leaves of a
-- fully released reservation (1e-19 of money) is 0, and it never goes below 0.
CREATE OR REPLACE FUNCTION spend_nonnegative(p_amount float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN CASE WHEN p_amount < 1e-9 THEN 0 ELSE p_amount END;
END $$;

-- Sets a reservation to p_money / p_tokens (issue 35) if it fits, in one round trip:
-- - with p_turn: the turn's reservation; without one, it claims one of the user's unclaimed holds (taken by a send at
--   acceptance); without a hold either, a new one on p_accounts, or, when p_accounts is null, nothing ({missing}).
-- - without p_turn: a new hold p_id on p_accounts (a send's, before its message is stored).
-- Growing a reservation checks every account it holds on, under the accounts' row locks (taken in account order, so
-- concurrent reservations queue instead of deadlocking): reserved + spent since the period's first day (p_starts:
-- the day, week and month starts) + the growth must stay within the account's limit, in the limit's unit. Shrinking
-- always succeeds. Answers {"ok":true}, {"missing":true}, or {"refused":{account, amount, unit, period}}.
CREATE OR REPLACE FUNCTION spend_reserve(
  p_id uuid, p_user text, p_turn uuid, p_accounts text[], p_limit_amounts float8[], p_limit_units text[],
  p_limit_periods text[], p_starts date[], p_money float8, p_tokens float8, p_expires_at timestamptz
) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
  r spend_reservations%ROWTYPE;
  fresh boolean := false;
  delta float8;
  used float8;
  i int;
BEGIN
  IF p_turn IS NOT NULL THEN
    SELECT * INTO r FROM spend_reservations WHERE turn_id = p_turn FOR UPDATE;
    IF NOT FOUND THEN
      SELECT * INTO r FROM spend_reservations
        WHERE user_id = p_user AND turn_id IS NULL AND expires_at > now()
        ORDER BY created_at, id LIMIT 1 FOR UPDATE SKIP LOCKED;
      IF FOUND THEN
        UPDATE spend_reservations SET turn_id = p_turn WHERE id = r.id;
      END IF;
    END IF;
  END IF;
  IF r.id IS NULL THEN
    IF p_accounts IS NULL THEN
      RETURN '{"missing":true}'::jsonb;
    END IF;
    fresh := true;
    r.id := p_id;
    r.accounts := p_accounts;
    r.limit_amounts := p_limit_amounts;
    r.limit_units := p_limit_units;
    r.limit_periods := p_limit_periods;
    r.money := 0;
    r.tokens := 0;
  END IF;
  INSERT INTO spend_accounts (account) SELECT unnest(r.accounts) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM spend_accounts WHERE account = ANY (r.accounts) ORDER BY account FOR UPDATE;
  FOR i IN 1 .. coalesce(array_length(r.accounts, 1), 0) LOOP
    delta := CASE WHEN r.limit_units[i] = 'money' THEN p_money - r.money ELSE p_tokens - r.tokens END;
    CONTINUE WHEN delta <= 0;
    SELECT CASE WHEN r.limit_units[i] = 'money' THEN a.reserved_money ELSE a.reserved_tokens END
        + coalesce((
          SELECT sum(CASE WHEN r.limit_units[i] = 'money' THEN d.spent_money ELSE d.spent_tokens END)
          FROM spend_days d
          WHERE d.account = r.accounts[i]
            AND d.day >= p_starts[CASE r.limit_periods[i] WHEN 'day' THEN 1 WHEN 'week' THEN 2 ELSE 3 END]
        ), 0)
      INTO used FROM spend_accounts a WHERE a.account = r.accounts[i];
    IF used + delta > r.limit_amounts[i] THEN
      RETURN jsonb_build_object('refused', jsonb_build_object(
        'account', r.accounts[i], 'amount', r.limit_amounts[i], 'unit', r.limit_units[i], 'period', r.limit_periods[i]));
    END IF;
  END LOOP;
  UPDATE spend_accounts
    SET reserved_money = spend_nonnegative(reserved_money + p_money - r.money),
        reserved_tokens = spend_nonnegative(reserved_tokens + p_tokens - r.tokens)
    WHERE account = ANY (r.accounts);
  IF fresh THEN
    INSERT INTO spend_reservations (id, user_id, turn_id, accounts, limit_amounts, limit_units, limit_periods, money,
      tokens, expires_at)
    VALUES (p_id, p_user, p_turn, r.accounts, r.limit_amounts, r.limit_units, r.limit_periods, p_money, p_tokens,
      p_expires_at);
  ELSE
    UPDATE spend_reservations SET money = p_money, tokens = p_tokens, expires_at = p_expires_at WHERE id = r.id;
  END IF;
  RETURN '{"ok":true}'::jsonb;
END $$;

-- Counts one model call's spending (issue 35) on day p_day, in one round trip: on the accounts of the turn's
-- reservation (its user's and, for a guest, its address's), whose reserved amount is released at the same time and
-- set to 0 (the row stays for the turn's next call); without a reservation (background work, an unlimited user, a
-- reservation the sweeper already released), on the user's account alone. No user (a deleted thread's call): nothing.
CREATE OR REPLACE FUNCTION spend_settle(p_turn uuid, p_user text, p_day date, p_money float8, p_tokens float8)
RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  r spend_reservations%ROWTYPE;
  accounts text[] := ARRAY['user:' || p_user];
BEGIN
  IF p_user IS NULL THEN
    RETURN;
  END IF;
  IF p_turn IS NOT NULL THEN
    SELECT * INTO r FROM spend_reservations WHERE turn_id = p_turn FOR UPDATE;
    IF FOUND THEN
      accounts := r.accounts;
    END IF;
  END IF;
  INSERT INTO spend_accounts (account) SELECT unnest(accounts) ON CONFLICT DO NOTHING;
  PERFORM 1 FROM spend_accounts WHERE account = ANY (accounts) ORDER BY account FOR UPDATE;
  IF r.id IS NOT NULL THEN
    UPDATE spend_accounts
      SET reserved_money = spend_nonnegative(reserved_money - r.money),
        reserved_tokens = spend_nonnegative(reserved_tokens - r.tokens)
      WHERE account = ANY (accounts);
    UPDATE spend_reservations SET money = 0, tokens = 0 WHERE id = r.id;
  END IF;
  INSERT INTO spend_days (account, day, spent_money, spent_tokens)
    SELECT account, p_day, p_money, p_tokens FROM unnest(accounts) AS account ORDER BY account
    ON CONFLICT (account, day) DO UPDATE
      SET spent_money = spend_days.spent_money + excluded.spent_money,
          spent_tokens = spend_days.spent_tokens + excluded.spent_tokens;
END $$;

-- Releases reservations (issue 35): the hold p_id (a send refused after its hold, a duplicate), the reservation of
-- the turn p_turn (its end), and, with p_stale, up to p_stale reservations that expired or whose turn has ended or
-- is gone (a crashed process', found by the sweeper). Their amounts leave their accounts' reserved; answers how many
-- were released.
CREATE OR REPLACE FUNCTION spend_release(p_id uuid, p_turn uuid, p_stale int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
  r spend_reservations%ROWTYPE;
  released int := 0;
BEGIN
  FOR r IN
    DELETE FROM spend_reservations WHERE id IN (
      SELECT s.id FROM spend_reservations s WHERE s.id = p_id OR s.turn_id = p_turn
      UNION ALL
      (SELECT s.id FROM spend_reservations s
        WHERE p_stale > 0 AND (s.expires_at < now() OR (s.turn_id IS NOT NULL AND NOT EXISTS (
          SELECT 1 FROM turns t WHERE t.id = s.turn_id AND t.status IN ('queued', 'running'))))
        ORDER BY s.expires_at LIMIT greatest(p_stale, 0))
    ) RETURNING *
  LOOP
    PERFORM 1 FROM spend_accounts WHERE account = ANY (r.accounts) ORDER BY account FOR UPDATE;
    UPDATE spend_accounts
      SET reserved_money = spend_nonnegative(reserved_money - r.money),
        reserved_tokens = spend_nonnegative(reserved_tokens - r.tokens)
      WHERE account = ANY (r.accounts);
    released := released + 1;
  END LOOP;
  RETURN released;
END $$;

-- A limit belongs to one user or one group, never both or neither.
ALTER TABLE "spend_limits" ADD CONSTRAINT "spend_limits_one_owner" CHECK (("user_id" IS NULL) <> ("group_id" IS NULL));
