/** The most bytes one character of a JSON string can take: a control character or lone surrogate as `\uXXXX`. */
const MAX_BYTES_PER_CHARACTER = 6;
/** Event name, ack id, keys, a thread id and a 100-character clientMessageId, with room to spare. */
const PACKET_OVERHEAD_BYTES = 4096;

/**
 * socket.io's `maxHttpBufferSize`: just above the largest valid client packet, a `message-send` whose content
 * is `maxMessageChars` characters that each JSON-escape to the most bytes. A bigger frame disconnects the
 * client before anything is parsed; a smaller one over the character limit is answered TOO_LARGE.
 */
export function maxHttpBufferSize(maxMessageChars: number): number {
  return maxMessageChars * MAX_BYTES_PER_CHARACTER + PACKET_OVERHEAD_BYTES;
}
