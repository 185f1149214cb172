import { useCallback } from 'react';
import type { MessageDto, SearchHitDto, ThreadDto } from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { navigate } from '../common/navigation';
import { MemoryPanel, type MemoryData } from './memory-panel';
import { scrollToSeqs } from './scroll-to-seqs';
import { SearchBox } from './search-box';
import { ThreadSidebar } from './thread-sidebar';
import { NEW_CHAT_PATH } from './use-draft-thread';
import type { ThreadList } from './use-thread-list';

/** The threads sidebar of the chat: search, open, rename, "+ New chat", more threads. */
export function ChatSidebar(props: {
  token: string | null;
  threadId: string | null;
  list: ThreadList;
  onOpenHit(hit: SearchHitDto): void;
  clearHighlight(): void;
  closeSidebar(): void;
  onFatal(message: string): void;
}) {
  const { token, threadId, list } = props;
  const rename = async (id: string, title: string) => {
    try {
      const updated = await requestJson<ThreadDto>(`/api/threads/${id}`, { method: 'PATCH', json: { title }, token });
      list.setThreads((current) => current.map((candidate) => (candidate.id === id ? updated : candidate)));
    } catch (error) {
      props.onFatal(ApiError.from(error).message);
    }
  };
  return (
    <ThreadSidebar
      threads={list.threads}
      activeId={threadId}
      hasMore={list.nextCursor !== null}
      onOpen={(id) => {
        props.clearHighlight();
        navigate(`/threads/${id}`);
        props.closeSidebar();
      }}
      search={<SearchBox token={token} threadId={threadId} onOpen={props.onOpenHit} onReset={props.clearHighlight} />}
      onCreate={() => {
        navigate(NEW_CHAT_PATH);
        props.closeSidebar();
      }}
      onRename={(id, title) => void rename(id, title)}
      onMore={() => void list.load(list.nextCursor ?? undefined)}
    />
  );
}

/** The memory panel of the open thread: citations and pinned entries scroll the transcript, loading older pages first. */
export function ChatMemoryPanel(props: {
  memory: { memory: MemoryData | null; memoryError: string | null };
  thread: ThreadDto | null;
  token: string | null;
  messages: MessageDto[] | undefined;
  loadThrough(seq: number): Promise<void>;
  onUnpin(message: MessageDto): void;
  onOpenElsewhere(at: { threadId: string; seq: number }): void;
  onClose(): void;
  draft: boolean;
}) {
  const { messages, loadThrough, onClose } = props;
  const messageAt = useCallback((seq: number) => messages?.find((message) => message.seq === seq), [messages]);
  const showSeqs = useCallback(
    (range: { from: number; through: number }) => {
      // Older history first when the cited messages are not loaded yet; on a narrow screen the panel covers the transcript.
      void loadThrough(range.from).then(() => {
        if (window.matchMedia('(max-width: 800px)').matches) onClose();
        return scrollToSeqs(range);
      });
    },
    [loadThrough, onClose],
  );
  return (
    <MemoryPanel
      data={props.memory.memory}
      error={props.memory.memoryError}
      thread={props.thread}
      token={props.token}
      messageAt={messageAt}
      onUnpin={props.onUnpin}
      onShow={showSeqs}
      onClose={onClose}
      onOpenElsewhere={props.onOpenElsewhere}
      draft={props.draft}
    />
  );
}
