-- spend_reserve: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function spend_reserve`.
--
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
