import { useCallback, useEffect, useState } from 'react';
import type { SearchHitDto } from '../../../src/shared/api';
import { navigate } from '../common/navigation';
import { scrollToSeqs } from './scroll-to-seqs';

interface MessageAt {
  threadId: string;
  seq: number;
}

/**
 * A search hit (or a saved memory's source) opens its thread at that message: once the thread is joined, older pages
 * load down to the message, which is scrolled into view and stays highlighted (until another hit or thread is chosen).
 */
export function useJumpToMessage(input: {
  /** The thread joined now (null while joining). */
  joinedThreadId: string | null;
  loadThrough(seq: number): Promise<void>;
  closeSidebar(): void;
}) {
  const { joinedThreadId, loadThrough, closeSidebar } = input;
  const [jumpTo, setJumpTo] = useState<MessageAt | null>(null);
  const [highlight, setHighlight] = useState<MessageAt | null>(null);
  const openAt = useCallback(
    (at: MessageAt) => {
      setHighlight({ threadId: at.threadId, seq: at.seq });
      setJumpTo({ threadId: at.threadId, seq: at.seq });
      navigate(`/threads/${at.threadId}`);
      closeSidebar();
    },
    [closeSidebar],
  );
  const clearHighlight = useCallback(() => setHighlight(null), []);
  const openHit = useCallback((hit: SearchHitDto) => openAt({ threadId: hit.threadId, seq: hit.seq }), [openAt]);
  useEffect(() => {
    if (!jumpTo || joinedThreadId !== jumpTo.threadId) return;
    setJumpTo(null);
    void loadThrough(jumpTo.seq).then(() => scrollToSeqs({ from: jumpTo.seq, through: jumpTo.seq }));
  }, [jumpTo, joinedThreadId, loadThrough]);
  return { highlight, openAt, openHit, clearHighlight };
}
