-- client_view_state: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function client_view_state`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- The chain state of message m from the message before it (the greatest seq below m's): prefix_hash is the chain
-- through m's item, its answer taken as ending at m (null for a message a client does not see), chain the chain of
-- the items closed through m, answer_from the first seq of the answer still open after m (of the answer m ends, for a
-- note that joins an answer closed by the client's calls). All three null while m or a message before it is still
-- being written (streaming) or has no seq.
CREATE OR REPLACE FUNCTION client_view_state(m messages, OUT prefix_hash bytea, OUT chain bytea, OUT answer_from integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  prev record;
  prev_chain bytea;
  prev_from integer;
  closed bytea;
  base bytea;
  joined text;
  calls jsonb;
  names text[];
  ids bytea := '';
  tool_call jsonb;
  said record;
  ender record;
BEGIN
  IF m.seq IS NULL OR m.status = 'streaming' THEN
    RETURN;
  END IF;
  SELECT p.client_chain, p.client_answer_from, p.client_prefix_hash INTO prev
    FROM messages p WHERE p.thread_id = m.thread_id AND p.seq < m.seq ORDER BY p.seq DESC LIMIT 1;
  IF NOT FOUND THEN
    prev_chain := sha256(convert_to('client-view', 'UTF8'));
  ELSIF prev.client_chain IS NULL THEN
    RETURN;
  ELSE
    prev_chain := prev.client_chain;
    -- An answer is open after the message before when it carries one that it did not close (client calls close it).
    IF prev.client_answer_from IS NOT NULL AND prev.client_prefix_hash IS DISTINCT FROM prev.client_chain THEN
      prev_from := prev.client_answer_from;
    END IF;
  END IF;
  chain := prev_chain;
  answer_from := prev_from;
  IF client_view_hidden(m) THEN
    RETURN;
  END IF;
  IF m.role = 'system' THEN
    -- A saved memory's note (client_view_answer_note; client-view.ts, readAnswerNote): a line of the answer of its
    -- turn, the latest answer since the last user message, while that answer is still the last item (open, or closed
    -- by the client's calls); any other note is not seen.
    SELECT p.role, p.turn_id, p.tool_calls INTO said FROM messages p
      WHERE p.thread_id = m.thread_id AND p.seq < m.seq AND p.role IN ('user', 'assistant') AND NOT client_view_hidden(p)
      ORDER BY p.seq DESC LIMIT 1;
    IF NOT FOUND OR said.role <> 'assistant' OR said.turn_id IS DISTINCT FROM m.turn_id THEN
      RETURN;
    END IF;
    IF prev_from IS NOT NULL THEN
      base := prev_chain;
    ELSE
      -- The answer the client's calls closed: the last item when no client tool's result came after it.
      SELECT p.role, p.client_answer_from INTO ender FROM messages p
        WHERE p.thread_id = m.thread_id AND p.seq < m.seq AND p.client_prefix_hash IS NOT NULL
        ORDER BY p.seq DESC LIMIT 1;
      IF NOT FOUND OR ender.role NOT IN ('assistant', 'system') OR ender.client_answer_from IS NULL THEN
        RETURN;
      END IF;
      answer_from := ender.client_answer_from;
      SELECT p.client_chain INTO base FROM messages p
        WHERE p.thread_id = m.thread_id AND p.seq < answer_from ORDER BY p.seq DESC LIMIT 1;
      base := coalesce(base, sha256(convert_to('client-view', 'UTF8')));
      calls := said.tool_calls;
    END IF;
  ELSIF m.role = 'assistant' THEN
    answer_from := coalesce(prev_from, m.seq);
    base := prev_chain;
    calls := m.tool_calls;
  END IF;
  IF m.role IN ('assistant', 'system') THEN
    -- The answer's texts so far: its assistant messages' and the notes it joined (those with a hash).
    SELECT string_agg(p.content, E'\n\n' ORDER BY p.seq) INTO joined FROM messages p
      WHERE p.thread_id = m.thread_id AND p.seq >= answer_from AND p.seq < m.seq AND p.content <> ''
        AND NOT client_view_hidden(p)
        AND (p.role = 'assistant' OR (p.role = 'system' AND p.client_prefix_hash IS NOT NULL));
    IF m.content <> '' THEN
      joined := CASE WHEN joined IS NULL THEN m.content ELSE joined || E'\n\n' || m.content END;
    END IF;
    IF jsonb_typeof(calls) = 'array' THEN
      names := client_view_tool_names(m.thread_id);
      FOR tool_call IN SELECT value FROM jsonb_array_elements(calls) LOOP
        IF tool_call->>'name' = ANY (names) THEN
          ids := ids || sha256(convert_to(coalesce(tool_call->>'id', ''), 'UTF8'));
        END IF;
      END LOOP;
    END IF;
    prefix_hash := client_view_link(base, 'assistant', coalesce(joined, ''), ids);
    -- An answer the client's calls closed: its item ends here (a note joining it closes it again).
    IF length(ids) > 0 OR (prev_from IS NULL AND m.role = 'system') THEN
      chain := prefix_hash;
    END IF;
    RETURN;
  END IF;
  IF m.role = 'tool' AND NOT client_view_client_result(m) THEN
    -- A server tool's result: inside its answer, not part of what the client saw.
    RETURN;
  END IF;
  -- A user message or a client tool's result closes the open answer (its last part's hash is the answer's).
  closed := prev_chain;
  IF prev_from IS NOT NULL THEN
    SELECT p.client_prefix_hash INTO closed FROM messages p
      WHERE p.thread_id = m.thread_id AND p.seq >= prev_from AND p.seq < m.seq AND p.client_prefix_hash IS NOT NULL
      ORDER BY p.seq DESC LIMIT 1;
  END IF;
  prefix_hash := client_view_link(closed, m.role, m.content,
    CASE WHEN m.role = 'tool' THEN convert_to(coalesce(m.tool_call_id, ''), 'UTF8') ELSE '' END);
  chain := prefix_hash;
  answer_from := NULL;
END
$$;
