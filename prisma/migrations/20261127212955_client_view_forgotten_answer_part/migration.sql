-- A middle part of an answer with server-tool rounds forgotten (or superseded): the trigger that re-chains the messages
-- after a changed one stopped at the server tool's result after it, unchanged, so the answer's last part (and all
-- chained after it) kept a hash of the text the client no longer got. It now goes on while an answer stays open; the
-- threads where that happened are re-chained.

-- After a message's state changed (it completed, or was forgotten or superseded), the messages after it follow, up to
-- the first whose state stays the same and that leaves no answer open (on a normal append: none). Inside an open
-- answer an unchanged message does not stop it: the answer's later parts hash the texts of its earlier ones (a middle
-- part forgotten leaves the server tool's result after it as it was, not the answer's last part).
CREATE OR REPLACE FUNCTION messages_client_view_after() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  following messages;
  state record;
  at integer := NEW.seq;
BEGIN
  LOOP
    SELECT * INTO following FROM messages WHERE thread_id = NEW.thread_id AND seq > at ORDER BY seq LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT * INTO state FROM client_view_state(following);
    IF (state.prefix_hash, state.chain, state.answer_from)
      IS NOT DISTINCT FROM (following.client_prefix_hash, following.client_chain, following.client_answer_from) THEN
      EXIT WHEN state.answer_from IS NULL OR state.prefix_hash IS NOT DISTINCT FROM state.chain;
    ELSE
      UPDATE messages SET client_prefix_hash = state.prefix_hash, client_chain = state.chain,
        client_answer_from = state.answer_from
        WHERE id = following.id;
    END IF;
    at := following.seq;
  END LOOP;
  RETURN NULL;
END
$$;

-- Threads with a part of an answer forgotten or superseded after it began (a hidden message inside an open answer):
-- from the first such part on, in seq order, each message from the one before it.
DO $$
DECLARE
  m messages;
  state record;
BEGIN
  FOR m IN
    SELECT message.* FROM messages message
    JOIN (
      SELECT part.thread_id, min(part.seq) AS from_seq FROM messages part
      WHERE part.seq IS NOT NULL AND part.role = 'assistant' AND (part.deleted_at IS NOT NULL OR part.superseded)
        AND part.client_answer_from IS NOT NULL AND part.client_answer_from < part.seq
      GROUP BY part.thread_id
    ) changed ON changed.thread_id = message.thread_id AND message.seq >= changed.from_seq
    ORDER BY message.thread_id, message.seq
  LOOP
    SELECT * INTO state FROM client_view_state(m);
    UPDATE messages SET client_prefix_hash = state.prefix_hash, client_chain = state.chain,
      client_answer_from = state.answer_from
      WHERE id = m.id;
  END LOOP;
END
$$;
