-- Releases reservations (issue 35): the hold p_id unless a turn claimed it meanwhile (then it is that turn's; the
-- send's own turn-less hold stays for a later turn or expires), the reservation of
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
      SELECT s.id FROM spend_reservations s WHERE (s.id = p_id AND s.turn_id IS NULL) OR s.turn_id = p_turn
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
