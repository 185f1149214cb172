import { useCallback, useEffect, useState } from 'react';
import type { MessageContextDto } from '../../../src/shared/api';
import { requestJson } from '../api/request-json';
import { useChatSocket, type ChatSocket, type ConnectionStatus } from '../api/use-chat-socket';
import { navigate, usePath } from '../common/navigation';
import { ErrorBanner } from './chat-banners';
import { ChatHeader } from './chat-header';
import { ChatMain } from './chat-main';
import { ChatMemoryPanel, ChatSidebar } from './chat-side-panels';
import { SavedMemoriesView } from './saved-memories-view';
import type { ThreadEventListener } from './thread-store';
import { useBranches } from './use-branches';
import { NEW_CHAT_PATH, useDraftThread } from './use-draft-thread';
import { useForgottenCopies } from './use-forgotten-copies';
import { useGuestSession } from './use-guest-session';
import { useJumpToMessage } from './use-jump-to-message';
import { latestAnswerOf, useMemoryData } from './use-memory-data';
import { useThread } from './use-thread';
import { useThreadList, type ThreadList } from './use-thread-list';

function activeThreadIdOf(path: string): string | null {
  return /^\/threads\/([\w-]+)$/.exec(path)?.[1] ?? null;
}

/** `/` opens the most recent thread (a first visit stays on the draft). */
function useOpenLatestThread(token: string | null, list: ThreadList, path: string) {
  useEffect(() => {
    if (!token || !list.loaded || path !== '/') return;
    const latest = [...list.threads].sort((left, right) => right.lastActivityAt.localeCompare(left.lastActivityAt))[0];
    if (latest) navigate(`/threads/${latest.id}`, { replace: true });
  }, [token, list.loaded, list.threads, path]);
}

/** The thread's events: a message moves its thread up the list, a change reloads the list, the memory panel follows. */
function useThreadEventListener(threadId: string | null, list: ThreadList, memoryEvent: ThreadEventListener) {
  return useCallback<ThreadEventListener>(
    (event) => {
      if (event === 'message' && threadId) {
        const now = new Date().toISOString();
        list.setThreads((current) =>
          current.map((thread) => (thread.id === threadId ? { ...thread, lastActivityAt: now } : thread)),
        );
      }
      // The next event reloads the list (the browser has no log).
      // eslint-disable-next-line no-restricted-syntax -- a failed refresh is retried by the next event
      if (event === 'thread-updated' || event === 'turn-end') list.load().catch(() => undefined);
      memoryEvent(event);
    },
    [threadId, list, memoryEvent],
  );
}

/** The chat's routes: `/threads/:id`, `/memories` (the saved memories view), and the draft of a new chat. */
function useChatRoute(list: ThreadList) {
  const path = usePath();
  const threadId = activeThreadIdOf(path);
  const onMemoriesPage = path === '/memories';
  // A new chat is a draft (`/new`, or `/` with no thread yet) until its first message: no thread is created before it,
  // so visits and "+ New chat" leave no empty chats behind.
  const draft = !threadId && !onMemoriesPage && (path === NEW_CHAT_PATH || (list.loaded && list.threads.length === 0));
  return { path, threadId, onMemoriesPage, draft };
}

/**
 * The open thread and what follows it: its live state, the memory panel's data, the copies a forget left elsewhere,
 * the draft's first message, jumps to a message (search hits, sources) and branches.
 */
function useOpenThread(input: {
  token: string | null;
  threadId: string | null;
  socket: ChatSocket | null;
  status: ConnectionStatus;
  list: ThreadList;
  memoryOpen: boolean;
  closeSidebar(): void;
  onFatal(message: string): void;
}) {
  const { token, threadId, socket, status, list, memoryOpen, closeSidebar, onFatal } = input;
  const memory = useMemoryData({ token, threadId, memoryOpen });
  const copies = useForgottenCopies({ token, threadId, onFatal });
  const onEvent = useThreadEventListener(threadId, list, memory.onThreadEvent);
  const thread = useThread({ socket, status, token, threadId, onEvent, onForgotten: copies.setCopies });
  memory.latestAnswer.current = latestAnswerOf(thread.state?.messages);
  const startThread = useDraftThread({
    token,
    list,
    shownThreadId: thread.state?.threadId,
    send: thread.actions.send,
    onFatal,
  });
  const { loadThrough } = thread.actions;
  const joinedThreadId = thread.joined ? (thread.state?.threadId ?? null) : null;
  const jump = useJumpToMessage({ joinedThreadId, loadThrough, closeSidebar });
  const { clearHighlight } = jump;
  const branches = useBranches({ token, threadId, socket, list, clearHighlight, onFatal });
  const loadSeen = useCallback(
    (messageId: string) =>
      requestJson<MessageContextDto>(`/api/threads/${threadId}/messages/${messageId}/context`, { token }),
    [threadId, token],
  );
  return { memory, copies, thread, startThread, jump, branches, loadSeen };
}

/** The chat at `/`: guest session, threads, the live conversation and the memory panel. */
export function ChatApp() {
  const [fatal, setFatal] = useState<string | null>(null);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [memoryOpen, setMemoryOpen] = useState(false);
  const closeSidebar = useCallback(() => setSidebarOpen(false), []);
  const { session, info, renew } = useGuestSession(setFatal);
  const token = session?.token ?? null;
  const list = useThreadList(token, setFatal);
  const { path, threadId, onMemoriesPage, draft } = useChatRoute(list);
  const { socket, status } = useChatSocket({ userId: session?.userId ?? null, token, renew });
  useOpenLatestThread(token, list, path);
  const { memory, copies, thread, startThread, jump, branches, loadSeen } = useOpenThread({
    token,
    threadId,
    socket,
    status,
    list,
    memoryOpen,
    closeSidebar,
    onFatal: setFatal,
  });
  const { loadThrough } = thread.actions;
  const activeThread = list.threads.find((candidate) => candidate.id === threadId) ?? null;
  const live = thread.state?.thread ?? null;
  const closeMemory = useCallback(() => setMemoryOpen(false), []);

  return (
    <div className={`chat-app${memoryOpen ? ' with-memory' : ''}${sidebarOpen ? ' sidebar-open' : ''}`}>
      <ChatHeader
        title={live?.title ?? activeThread?.title ?? (draft ? 'New chat' : 'Chat')}
        {...{ info, token, socket, status, sidebarOpen, onMemoriesPage, activeThread, memoryOpen }}
        onToggleSidebar={() => setSidebarOpen(!sidebarOpen)}
        onToggleMemory={() => setMemoryOpen(!memoryOpen)}
      />
      {fatal ? <ErrorBanner message={fatal} onDismiss={() => setFatal(null)} /> : null}
      <ChatSidebar
        {...{ token, threadId, list, closeSidebar }}
        onOpenHit={jump.openHit}
        clearHighlight={jump.clearHighlight}
        onFatal={setFatal}
      />
      {onMemoriesPage ? (
        <main className="chat-main">
          <SavedMemoriesView
            token={token}
            threads={list.threads}
            onOpenSource={jump.openAt}
            onClose={() => navigate('/')}
          />
        </main>
      ) : (
        <ChatMain
          {...{ thread, status, draft, memoryOpen, loadSeen, branches }}
          signedIn={session !== null}
          canStartThread={token !== null}
          onStartThread={(content) => void startThread(content)}
          threads={list.threads}
          copies={copies.copies}
          onForgetCopies={copies.forgetCopies}
          onKeepCopies={copies.keepCopies}
          memory={memory.memory}
          highlightSeq={jump.highlight?.threadId === threadId ? jump.highlight.seq : null}
        />
      )}
      {memoryOpen ? (
        <ChatMemoryPanel
          {...{ memory, token, loadThrough, draft }}
          thread={live}
          messages={thread.state?.messages}
          onUnpin={(message) => thread.actions.setPinned(message, false)}
          onOpenElsewhere={jump.openAt}
          onClose={closeMemory}
        />
      ) : null}
    </div>
  );
}
