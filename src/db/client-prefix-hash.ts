import { createHash } from 'node:crypto';
import { normalize } from '../core/facade/reconcile-history';
import type { ClientMessage } from '../core/ports';

// The chain of hashes over a client's view of a thread, byte for byte as the database computes it for stored messages
// (migration client_prefix_hash, functions client_view_link and client_view_state):
//   chain = sha256(previous chain || role || 0x00 || sha256(extra) || normalised text), from sha256('client-view')
//   extra: '' for a user message, the call id for a tool result, sha256(id) of each client call for an answer
// One hash per message (the text is the remainder, so the encoding is unambiguous).

const sha256 = (...parts: (string | Uint8Array)[]): Buffer => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};

const GENESIS = sha256('client-view');
const ZERO = Buffer.from([0]);
const NO_EXTRA = sha256(Buffer.alloc(0));

/** A lone surrogate: stored text cannot hold one (Postgres would have it as U+FFFD), so such a message never matches. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function link(chain: Uint8Array, message: ClientMessage): Buffer {
  const extra =
    message.role === 'tool'
      ? sha256(message.toolCallId)
      : message.role === 'assistant' && message.toolCalls.length > 0
        ? sha256(...message.toolCalls.map((call) => sha256(call.id)))
        : NO_EXTRA;
  const role = LONE_SURROGATE.test(message.content) ? `${message.role} (ill-formed text)` : message.role;
  return sha256(chain, role, ZERO, extra, normalize(message.content));
}

/**
 * The chain hashes of a client's messages from index `from` on (element i: through messages[from + i]), chained from
 * `base`, the stored chain through messages[from - 1] (null at the start).
 */
export function chainHashes(input: {
  messages: readonly ClientMessage[];
  from: number;
  base: Uint8Array | null;
}): Uint8Array[] {
  let chain: Uint8Array = input.base ?? GENESIS;
  const hashes: Uint8Array[] = [];
  for (let index = input.from; index < input.messages.length; index += 1) {
    chain = link(chain, input.messages[index] as ClientMessage);
    hashes.push(chain);
  }
  return hashes;
}
