-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "client_answer_from" INTEGER,
ADD COLUMN     "client_chain" BYTEA,
ADD COLUMN     "client_prefix_hash" BYTEA;

-- CreateIndex
CREATE INDEX "messages_thread_id_client_prefix_hash_idx" ON "messages"("thread_id", "client_prefix_hash");

-- The /v1 route's history matching (src/core/facade/match-history.ts) looks a client's history up by hashes instead
-- of reading whole transcripts. Each message with a seq carries the state of a SHA-256 chain over the thread's client
-- view (src/core/facade/client-view.ts: user messages, answers with their server-tool rounds joined, calls of the
-- client's tools and their results), computed from the message before it by the triggers below whenever a message
-- takes its seq, completes, or is forgotten or superseded. The bytes hashed are those of
-- src/db/client-prefix-hash.ts (a test keeps the two equal):
--   chain = sha256(previous chain || role || 0x00 || sha256(extra) || normalised text), from sha256('client-view')
--   extra: '' for a user message, the call id for a tool result, sha256(id) of each client call for an answer
-- Texts are normalised as the route compares them: \r\n and \r become \n, then JavaScript's trim().
-- A call is the client's when its name is one of the thread's client tools (settings.openaiClient.tools) when the
-- answer completes: the calls the turn runner handed back to the client.

CREATE FUNCTION "client_view_normalize"(p_text text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT btrim(regexp_replace(p_text, E'\r\n?', E'\n', 'g'),
    E'\t\n\u000B\f\r \u00A0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200A\u2028\u2029\u202F\u205F\u3000\uFEFF')
$$;

-- The chain through one more item of the client view.
CREATE FUNCTION "client_view_link"(p_chain bytea, p_role text, p_content text, p_extra bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT sha256(p_chain || convert_to(p_role, 'UTF8') || '\x00'::bytea || sha256(p_extra)
    || convert_to(client_view_normalize(p_content), 'UTF8'))
$$;

-- Not shown to a client (client-view.ts, isHidden): no seq, forgotten, superseded, notices, async tool notes, errors,
-- queued, and an answer stopped before its first word.
CREATE FUNCTION "client_view_hidden"(m messages) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT m.seq IS NULL OR m.deleted_at IS NOT NULL OR m.superseded OR m.role = 'system' OR m.tool_run_id IS NOT NULL
    OR m.status IN ('error', 'pending')
    OR (m.status = 'cancelled' AND m.content = ''
      AND CASE WHEN jsonb_typeof(m.tool_calls) = 'array' THEN jsonb_array_length(m.tool_calls) = 0 ELSE true END)
$$;

CREATE FUNCTION "client_view_tool_names"(p_thread uuid) RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT coalesce((
    SELECT array_agg(tool->'function'->>'name')
    FROM threads t CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(t.settings->'openaiClient'->'tools') = 'array' THEN t.settings->'openaiClient'->'tools'
      ELSE '[]'::jsonb END) tool
    WHERE t.id = p_thread), '{}')
$$;

-- Whether tool message m is the result of a client tool's call (else one of our tools' results, inside its answer).
CREATE FUNCTION "client_view_client_result"(m messages) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (
    SELECT 1 FROM messages a CROSS JOIN LATERAL jsonb_array_elements(
      CASE WHEN jsonb_typeof(a.tool_calls) = 'array' THEN a.tool_calls ELSE '[]'::jsonb END) c
    WHERE a.turn_id = m.turn_id AND a.thread_id = m.thread_id AND a.seq < m.seq AND a.role = 'assistant'
      AND NOT client_view_hidden(a) AND c->>'id' = m.tool_call_id
      AND c->>'name' = ANY (client_view_tool_names(m.thread_id)))
$$;

-- The chain state of message m from the message before it (the greatest seq below m's): prefix_hash is the chain
-- through m's item, its answer taken as ending at m (null for a message a client does not see), chain the chain of
-- the items closed through m, answer_from the first seq of the answer still open after m. All three null while m or
-- a message before it is still being written (streaming) or has no seq.
CREATE FUNCTION "client_view_state"(m messages, OUT prefix_hash bytea, OUT chain bytea, OUT answer_from integer)
LANGUAGE plpgsql STABLE AS $$
DECLARE
  prev record;
  prev_chain bytea;
  prev_from integer;
  closed bytea;
  joined text;
  names text[];
  ids bytea := '';
  tool_call jsonb;
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
  IF client_view_hidden(m) THEN
    chain := prev_chain;
    answer_from := prev_from;
    RETURN;
  END IF;
  IF m.role = 'assistant' THEN
    answer_from := coalesce(prev_from, m.seq);
    SELECT string_agg(p.content, E'\n\n' ORDER BY p.seq) INTO joined FROM messages p
      WHERE p.thread_id = m.thread_id AND p.seq >= answer_from AND p.seq < m.seq AND p.role = 'assistant'
        AND p.content <> '' AND NOT client_view_hidden(p);
    IF m.content <> '' THEN
      joined := CASE WHEN joined IS NULL THEN m.content ELSE joined || E'\n\n' || m.content END;
    END IF;
    IF jsonb_typeof(m.tool_calls) = 'array' THEN
      names := client_view_tool_names(m.thread_id);
      FOR tool_call IN SELECT value FROM jsonb_array_elements(m.tool_calls) LOOP
        IF tool_call->>'name' = ANY (names) THEN
          ids := ids || sha256(convert_to(coalesce(tool_call->>'id', ''), 'UTF8'));
        END IF;
      END LOOP;
    END IF;
    prefix_hash := client_view_link(prev_chain, 'assistant', coalesce(joined, ''), ids);
    chain := CASE WHEN length(ids) > 0 THEN prefix_hash ELSE prev_chain END;
    RETURN;
  END IF;
  IF m.role = 'tool' AND NOT client_view_client_result(m) THEN
    -- A server tool's result: inside its answer, not part of what the client saw.
    chain := prev_chain;
    answer_from := prev_from;
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
END
$$;

CREATE FUNCTION "messages_client_view"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  state record;
BEGIN
  SELECT * INTO state FROM client_view_state(NEW);
  NEW.client_prefix_hash := state.prefix_hash;
  NEW.client_chain := state.chain;
  NEW.client_answer_from := state.answer_from;
  RETURN NEW;
END
$$;

-- After a message's state changed (it completed, or was forgotten or superseded), the messages after it follow, up to
-- the first whose state stays the same (on a normal append: none).
CREATE FUNCTION "messages_client_view_after"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  following messages;
  state record;
  at integer := NEW.seq;
BEGIN
  LOOP
    SELECT * INTO following FROM messages WHERE thread_id = NEW.thread_id AND seq > at ORDER BY seq LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT * INTO state FROM client_view_state(following);
    EXIT WHEN (state.prefix_hash, state.chain, state.answer_from)
      IS NOT DISTINCT FROM (following.client_prefix_hash, following.client_chain, following.client_answer_from);
    UPDATE messages SET client_prefix_hash = state.prefix_hash, client_chain = state.chain,
      client_answer_from = state.answer_from
      WHERE id = following.id;
    at := following.seq;
  END LOOP;
  RETURN NULL;
END
$$;

-- A row inserted with a state (a row copied into a fork) keeps it.
CREATE TRIGGER "messages_client_view_insert" BEFORE INSERT ON "messages"
  FOR EACH ROW WHEN (NEW.seq IS NOT NULL AND NEW.client_chain IS NULL)
  EXECUTE FUNCTION "messages_client_view"();

-- Streaming saves (a streaming message's text) do no chain work.
CREATE TRIGGER "messages_client_view_update" BEFORE UPDATE OF "seq", "status", "content", "role", "tool_calls",
  "tool_call_id", "tool_run_id", "deleted_at", "superseded" ON "messages"
  FOR EACH ROW WHEN (NOT (OLD.status = 'streaming' AND NEW.status = 'streaming' AND OLD.seq IS NOT DISTINCT FROM NEW.seq)
    AND (OLD.seq, OLD.status, OLD.content, OLD.role, OLD.tool_calls, OLD.tool_call_id, OLD.tool_run_id, OLD.deleted_at,
      OLD.superseded) IS DISTINCT FROM (NEW.seq, NEW.status, NEW.content, NEW.role, NEW.tool_calls, NEW.tool_call_id,
      NEW.tool_run_id, NEW.deleted_at, NEW.superseded))
  EXECUTE FUNCTION "messages_client_view"();

CREATE TRIGGER "messages_client_view_after_update" AFTER UPDATE OF "seq", "status", "content", "role", "tool_calls",
  "tool_call_id", "tool_run_id", "deleted_at", "superseded" ON "messages"
  FOR EACH ROW WHEN (NEW.seq IS NOT NULL AND (OLD.client_prefix_hash, OLD.client_chain, OLD.client_answer_from)
    IS DISTINCT FROM (NEW.client_prefix_hash, NEW.client_chain, NEW.client_answer_from))
  EXECUTE FUNCTION "messages_client_view_after"();

-- Messages stored before this migration: each thread in seq order, each message from the one before it.
DO $$
DECLARE
  m messages;
  state record;
BEGIN
  FOR m IN SELECT * FROM messages WHERE seq IS NOT NULL ORDER BY thread_id, seq LOOP
    SELECT * INTO state FROM client_view_state(m);
    UPDATE messages SET client_prefix_hash = state.prefix_hash, client_chain = state.chain,
      client_answer_from = state.answer_from
      WHERE id = m.id;
  END LOOP;
END
$$;
