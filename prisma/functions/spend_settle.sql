-- spend_settle: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function spend_settle`.
--
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
