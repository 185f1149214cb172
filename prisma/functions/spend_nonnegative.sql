-- spend_nonnegative: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function spend_nonnegative`.
--
-- A reserved amount after additions and subtractions of the same floating-point figures: what rounding leaves of a
-- fully released reservation (1e-19 of money) is 0, and it never goes below 0.
CREATE OR REPLACE FUNCTION spend_nonnegative(p_amount float8) RETURNS float8
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN CASE WHEN p_amount < 1e-9 THEN 0 ELSE p_amount END;
END $$;
