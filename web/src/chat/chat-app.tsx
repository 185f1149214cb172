import { useCallback, useEffect, useRef, useState } from 'react';
import type {
  ContextPackDto,
  EditMessageResponseDto,
  ForkListDto,
  ForkSummaryDto,
  MessageContextDto,
  MessageCopyDto,
  MessageDto,
  SearchHitDto,
  ServerInfoDto,
  ThreadDetailDto,
  ThreadDto,
} from '../../../src/shared/api';
import { ApiError } from '../api/api-error';
import { ensureGuestSession, renewDelayMs, renewGuestSession, type Session } from '../api/guest-session';
import { requestJson } from '../api/request-json';
import { useChatSocket, type ConnectionStatus } from '../api/use-chat-socket';
import { SpendMeter } from './spend-meter';
import { navigate, usePath } from '../common/navigation';
import { Composer } from './composer';
import { Conversation, type BranchControls } from './conversation';
import { newClientId } from './new-client-id';
import { MemoryPanel, type MemoryData } from './memory-panel';
import { scrollToSeqs } from './scroll-to-seqs';
import { SavedMemoriesView } from './saved-memories-view';
import { SearchBox } from './search-box';
import { isAnswering } from './thread-state';
import { ThreadSidebar } from './thread-sidebar';
import { useThread, type ThreadEventListener } from './use-thread';

const STATUS_TEXT: Record<ConnectionStatus, string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
};

function useThreadList(token: string | null) {
  const [threads, setThreads] = useState<ThreadDto[]>([]);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [loaded, setLoaded] = useState(false);
  const load = useCallback(
    async (cursor?: string) => {
      if (!token) return;
      const page = await requestJson<{ threads: ThreadDto[]; nextCursor: string | null }>(
        `/api/threads?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { token },
      );
      setThreads((current) => {
        const byId = new Map((cursor ? current : []).map((thread) => [thread.id, thread]));
        for (const thread of page.threads) byId.set(thread.id, thread);
        return [...byId.values()];
      });
      setNextCursor(page.nextCursor);
      setLoaded(true);
    },
    [token],
  );
  return { threads, setThreads, nextCursor, loaded, load };
}

/**
 * Keeps the guest token fresh: renewed before it expires (REST calls never carry an expired token), and on demand
 * when the socket reports `session-expired`. Concurrent demands share one refresh.
 */
function useSessionRenewal(session: Session | null, setSession: (session: Session) => void): () => Promise<string> {
  const current = useRef(session);
  current.current = session;
  const pending = useRef<Promise<string> | null>(null);
  const renew = useCallback(() => {
    const from = current.current;
    if (!from) return Promise.reject(new Error('no session yet'));
    pending.current ??= renewGuestSession(from)
      .then((next) => {
        current.current = next;
        setSession(next);
        return next.token;
      })
      .finally(() => {
        pending.current = null;
      });
    return pending.current;
  }, [setSession]);
  useEffect(() => {
    if (!session) return undefined;
    let timer: number | undefined;
    // Offline or the server away: try again in a while (the refresh also takes a token that just expired).
    const attempt = (delayMs: number) => {
      timer = window.setTimeout(() => renew().catch(() => attempt(10_000)), delayMs);
    };
    attempt(renewDelayMs(session));
    return () => window.clearTimeout(timer);
  }, [session, renew]);
  return renew;
}

/** Where a branch came from: a link back to the original conversation. */
function ForkOrigin(props: { thread: ThreadDto; parentTitle: string | null; onOpen(threadId: string): void }) {
  const origin = props.thread.forkedFrom;
  if (!origin) return null;
  return (
    <p className="banner info fork-origin" role="note">
      Branched from{' '}
      {origin.threadId ? (
        <a
          href={`/threads/${origin.threadId}`}
          onClick={(event) => {
            event.preventDefault();
            if (origin.threadId) props.onOpen(origin.threadId);
          }}
        >
          {props.parentTitle ?? 'the original conversation'}
        </a>
      ) : (
        'a conversation since deleted'
      )}{' '}
      at message #{origin.seq}.
    </p>
  );
}

/** After a forget: the branches (or the original) that still hold a copy, and the offer to forget it there too. */
function CopiesNotice(props: { copies: MessageCopyDto[]; onForgetThere(): void; onDismiss(): void }) {
  const threads = [...new Map(props.copies.map((copy) => [copy.threadId, copy.title])).values()];
  return (
    <div className="banner info" role="alert">
      <span>
        Deleted here only: {threads.length === 1 ? 'another conversation' : `${threads.length} other conversations`} (
        {threads.join(', ')}) still {threads.length === 1 ? 'holds' : 'hold'} a copy.
      </span>
      <button type="button" onClick={props.onForgetThere}>
        Delete it there too
      </button>
      <button type="button" onClick={props.onDismiss}>
        Keep it there
      </button>
    </div>
  );
}

/** A new chat before its first message (no thread exists yet). */
const NEW_CHAT_PATH = '/new';

function activeThreadIdOf(path: string): string | null {
  return /^\/threads\/([\w-]+)$/.exec(path)?.[1] ?? null;
}

/** The chat at `/`: guest session, threads, the live conversation and the memory panel. */
export function ChatApp() {
  const [session, setSession] = useState<Session | null>(null);
  const [info, setInfo] = useState<ServerInfoDto | null>(null);
  const [fatal, setFatal] = useState<string | null>(null);
  const [sidebarOpen, setSidebarOpen] = useState(false);
  const [memoryOpen, setMemoryOpen] = useState(false);
  const [memory, setMemory] = useState<MemoryData | null>(null);
  const [memoryError, setMemoryError] = useState<string | null>(null);
  const token = session?.token ?? null;
  const path = usePath();
  const threadId = activeThreadIdOf(path);
  /** `/memories`: the saved memories view in place of the conversation. */
  const onMemoriesPage = path === '/memories';
  const list = useThreadList(token);
  const renew = useSessionRenewal(session, setSession);
  const { socket, status } = useChatSocket({ userId: session?.userId ?? null, token, renew });

  useEffect(() => {
    ensureGuestSession().then(setSession, (error: unknown) => setFatal(ApiError.from(error).message));
    requestJson<ServerInfoDto>('/api/info').then(setInfo, () => setInfo(null));
  }, []);

  useEffect(() => {
    list.load().catch((error: unknown) => setFatal(ApiError.from(error).message));
  }, [list.load]);

  // A new chat is a draft (`/new`, or `/` with no thread yet) until its first message: no thread is created before it,
  // so visits and "+ New chat" leave no empty chats behind.
  const draft = !threadId && !onMemoriesPage && (path === NEW_CHAT_PATH || (list.loaded && list.threads.length === 0));
  const newChat = useCallback(() => {
    navigate(NEW_CHAT_PATH);
    setSidebarOpen(false);
  }, []);

  // `/` opens the most recent thread (a first visit stays on the draft).
  useEffect(() => {
    if (!token || !list.loaded || path !== '/') return;
    const latest = [...list.threads].sort((left, right) => right.lastActivityAt.localeCompare(left.lastActivityAt))[0];
    if (latest) navigate(`/threads/${latest.id}`, { replace: true });
  }, [token, list.loaded, list.threads, path]);

  const loadSeen = useCallback(
    (messageId: string) =>
      requestJson<MessageContextDto>(`/api/threads/${threadId}/messages/${messageId}/context`, { token }),
    [threadId, token],
  );

  const memoryTimer = useRef<number | undefined>(undefined);
  // The latest answer, read when the panel refreshes: its manifest says what auto-recall gave the model for it.
  const latestAnswer = useRef<MessageDto | null>(null);
  const refreshMemory = useCallback(() => {
    if (!token || !threadId) return;
    const answer = latestAnswer.current?.threadId === threadId ? latestAnswer.current : null;
    Promise.all([
      requestJson<ContextPackDto>(`/api/threads/${threadId}/context`, { token }),
      requestJson<ThreadDetailDto>(`/api/threads/${threadId}`, { token }),
      // A missing manifest (an answer stored before manifests) only leaves the line out.
      answer
        ? requestJson<MessageContextDto>(`/api/threads/${threadId}/messages/${answer.id}/context`, { token }).catch(
            () => null,
          )
        : Promise.resolve(null),
    ]).then(
      ([pack, detail, seen]) => {
        setMemory({
          pack,
          detail,
          recalled: seen && answer?.seq != null ? { answerSeq: answer.seq, seqs: seen.recalledSeqs } : null,
        });
        setMemoryError(null);
      },
      (error: unknown) => setMemoryError(ApiError.from(error).message),
    );
  }, [token, threadId]);

  useEffect(() => {
    setMemory(null);
    if (memoryOpen) refreshMemory();
  }, [memoryOpen, refreshMemory]);

  const onEvent: ThreadEventListener = useCallback(
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
      if (!memoryOpen) return;
      window.clearTimeout(memoryTimer.current);
      memoryTimer.current = window.setTimeout(refreshMemory, event === 'summary-updated' ? 0 : 400);
    },
    [threadId, memoryOpen, refreshMemory, list],
  );

  const [copies, setCopies] = useState<MessageCopyDto[]>([]);
  const thread = useThread({ socket, status, token, threadId, onEvent, onForgotten: setCopies });

  // The draft's first message creates the thread, opens it and is sent there (through its outbox, once it is shown).
  const firstMessage = useRef<{ threadId: string; content: string } | null>(null);
  const creating = useRef(false);
  const startThread = useCallback(
    async (content: string) => {
      if (!token || creating.current) return;
      creating.current = true;
      try {
        const created = await requestJson<ThreadDto>('/api/threads', { method: 'POST', json: {}, token });
        list.setThreads((current) => [created, ...current.filter((candidate) => candidate.id !== created.id)]);
        firstMessage.current = { threadId: created.id, content };
        navigate(`/threads/${created.id}`, { replace: window.location.pathname === NEW_CHAT_PATH });
      } catch (error) {
        setFatal(ApiError.from(error).message);
      } finally {
        creating.current = false;
      }
    },
    [token, list],
  );
  const sendToThread = thread.actions.send;
  useEffect(() => {
    const pending = firstMessage.current;
    if (!pending || thread.state?.threadId !== pending.threadId) return;
    firstMessage.current = null;
    sendToThread(pending.content);
  }, [thread.state?.threadId, sendToThread]);
  useEffect(() => setCopies([]), [threadId]);
  const forgetCopies = useCallback(() => {
    const pending = copies;
    setCopies([]);
    void Promise.all(
      pending.map((copy) =>
        requestJson(`/api/threads/${copy.threadId}/messages/${copy.messageId}?only=true`, { method: 'DELETE', token }),
      ),
    ).catch((error: unknown) => setFatal(ApiError.from(error).message));
  }, [copies, token]);

  // Branches of the open thread, listed at their fork points.
  const [forks, setForks] = useState<ForkSummaryDto[]>([]);
  const loadForks = useCallback(() => {
    if (!token || !threadId) return;
    requestJson<ForkListDto>(`/api/threads/${threadId}/forks`, { token }).then(
      (list) => setForks(list.forks),
      () => setForks([]),
    );
  }, [token, threadId]);
  useEffect(() => {
    setForks([]);
    loadForks();
  }, [loadForks]);
  const openThread = useCallback((id: string) => {
    setHighlight(null);
    navigate(`/threads/${id}`);
  }, []);
  const opened = useCallback(
    (fork: ThreadDto) => {
      list.setThreads((current) => [fork, ...current.filter((candidate) => candidate.id !== fork.id)]);
      navigate(`/threads/${fork.id}`);
    },
    [list],
  );
  const branches: BranchControls = {
    forks,
    openThread,
    branch(message) {
      requestJson<ThreadDto>(`/api/threads/${message.threadId}/fork`, {
        method: 'POST',
        json: { atMessageId: message.id },
        token,
      }).then(opened, (error: unknown) => setFatal(ApiError.from(error).message));
    },
    edit(message, content) {
      const clientMessageId = newClientId();
      // Over the socket the ack comes at once and the answer streams in the branch; without one, REST waits for it.
      const viaSocket = socket?.connected
        ? socket
            .timeout(15_000)
            .emitWithAck('message-edit', {
              threadId: message.threadId,
              messageId: message.id,
              content,
              clientMessageId,
            })
            .then((ack) => {
              if (!ack.ok) throw new ApiError(ack.error);
              return ack.thread;
            })
        : requestJson<EditMessageResponseDto>(`/api/threads/${message.threadId}/messages/${message.id}/edit`, {
            method: 'POST',
            json: { content, clientMessageId },
            token,
          }).then((result) => result.thread);
      viaSocket.then(opened, (error: unknown) => setFatal(ApiError.from(error).message));
    },
  };
  const activeThread = list.threads.find((candidate) => candidate.id === threadId) ?? null;

  const rename = async (id: string, title: string) => {
    try {
      const updated = await requestJson<ThreadDto>(`/api/threads/${id}`, { method: 'PATCH', json: { title }, token });
      list.setThreads((current) => current.map((candidate) => (candidate.id === id ? updated : candidate)));
    } catch (error) {
      setFatal(ApiError.from(error).message);
    }
  };

  const live = thread.state?.thread ?? null;
  const loadThrough = thread.actions.loadThrough;
  const showSeqs = useCallback(
    (range: { from: number; through: number }) => {
      // Older history first when the cited messages are not loaded yet; on a narrow screen the panel covers the transcript.
      void loadThrough(range.from).then(() => {
        if (window.matchMedia('(max-width: 800px)').matches) setMemoryOpen(false);
        return scrollToSeqs(range);
      });
    },
    [loadThrough],
  );
  // A search hit opens its thread at that message: once the thread is joined, older pages load down to the message,
  // which is scrolled into view and stays highlighted (until another hit or thread is chosen).
  const [jumpTo, setJumpTo] = useState<{ threadId: string; seq: number } | null>(null);
  const [highlight, setHighlight] = useState<{ threadId: string; seq: number } | null>(null);
  const openAt = useCallback((at: { threadId: string; seq: number }) => {
    setHighlight({ threadId: at.threadId, seq: at.seq });
    setJumpTo({ threadId: at.threadId, seq: at.seq });
    navigate(`/threads/${at.threadId}`);
    setSidebarOpen(false);
  }, []);
  const clearHighlight = useCallback(() => setHighlight(null), []);
  const openHit = useCallback((hit: SearchHitDto) => openAt({ threadId: hit.threadId, seq: hit.seq }), [openAt]);
  const joinedThreadId = thread.joined ? (thread.state?.threadId ?? null) : null;
  useEffect(() => {
    if (!jumpTo || joinedThreadId !== jumpTo.threadId) return;
    setJumpTo(null);
    void loadThrough(jumpTo.seq).then(() => scrollToSeqs({ from: jumpTo.seq, through: jumpTo.seq }));
  }, [jumpTo, joinedThreadId, loadThrough]);

  const messages = thread.state?.messages;
  latestAnswer.current =
    messages?.findLast(
      (message) =>
        message.role === 'assistant' &&
        message.status === 'complete' &&
        !message.superseded &&
        !message.deleted &&
        message.seq !== null,
    ) ?? null;
  const messageAt = useCallback((seq: number) => messages?.find((message) => message.seq === seq), [messages]);

  const answering = thread.state ? isAnswering(thread.state) : false;
  const hint =
    status === 'connected'
      ? null
      : status === 'offline'
        ? 'You are offline: messages are sent when the connection returns.'
        : status === 'reconnecting'
          ? 'Reconnecting… messages are sent when the connection returns.'
          : null;

  return (
    <div className={`chat-app${memoryOpen ? ' with-memory' : ''}${sidebarOpen ? ' sidebar-open' : ''}`}>
      <header className="app-header">
        <button
          type="button"
          className="icon sidebar-toggle"
          aria-label="Threads"
          aria-expanded={sidebarOpen}
          onClick={() => setSidebarOpen(!sidebarOpen)}
        >
          ☰
        </button>
        <h1>{live?.title ?? activeThread?.title ?? (draft ? 'New chat' : 'Chat')}</h1>
        {info ? (
          <span
            className={`model-label${info.offline ? ' offline' : ''}`}
            title={info.offline ? 'No model endpoint configured: deterministic demo replies' : `Model ${info.model}`}
          >
            {info.offline ? (
              <>
                Offline model<span className="model-detail"> (demo replies)</span>
              </>
            ) : (
              info.model
            )}
            {info.demoWindow ? (
              <span className="model-window">
                {` · ${info.contextWindow.toLocaleString('en-US')}-token demo window`}
              </span>
            ) : null}
          </span>
        ) : null}
        <SpendMeter token={token} socket={socket} />
        <span className={`connection ${status}`} role="status" aria-label={`Connection: ${STATUS_TEXT[status]}`}>
          <span className="connection-text">{STATUS_TEXT[status]}</span>
        </span>
        <button
          type="button"
          className="saved-memories-link"
          aria-pressed={onMemoriesPage}
          onClick={() => navigate(onMemoriesPage ? (activeThread ? `/threads/${activeThread.id}` : '/') : '/memories')}
        >
          Saved memories
        </button>
        <button
          type="button"
          className="memory-toggle"
          aria-pressed={memoryOpen}
          onClick={() => setMemoryOpen(!memoryOpen)}
        >
          Memory
        </button>
      </header>
      {fatal ? (
        <div className="banner error" role="alert">
          {fatal}
          <button type="button" className="icon" aria-label="Dismiss" onClick={() => setFatal(null)}>
            ✕
          </button>
        </div>
      ) : null}
      <ThreadSidebar
        threads={list.threads}
        activeId={threadId}
        hasMore={list.nextCursor !== null}
        onOpen={(id) => {
          setHighlight(null);
          navigate(`/threads/${id}`);
          setSidebarOpen(false);
        }}
        search={<SearchBox token={token} threadId={threadId} onOpen={openHit} onReset={clearHighlight} />}
        onCreate={newChat}
        onRename={(id, title) => void rename(id, title)}
        onMore={() => void list.load(list.nextCursor ?? undefined)}
      />
      {onMemoriesPage ? (
        <main className="chat-main">
          <SavedMemoriesView token={token} threads={list.threads} onOpenSource={openAt} onClose={() => navigate('/')} />
        </main>
      ) : (
        <main className="chat-main">
          {live?.forkedFrom ? (
            <ForkOrigin
              thread={live}
              parentTitle={list.threads.find((candidate) => candidate.id === live.forkedFrom?.threadId)?.title ?? null}
              onOpen={openThread}
            />
          ) : null}
          {copies.length > 0 ? (
            <CopiesNotice copies={copies} onForgetThere={forgetCopies} onDismiss={() => setCopies([])} />
          ) : null}
          {live?.memoryRebuilding ? (
            <p className="banner info" role="status">
              Memory is being rebuilt after a deletion; answers meanwhile use the recent messages only.
            </p>
          ) : null}
          {thread.state?.notice ? (
            <div className="banner error" role="alert">
              {thread.state.notice.message}
              <button type="button" className="icon" aria-label="Dismiss" onClick={thread.actions.dismissNotice}>
                ✕
              </button>
            </div>
          ) : null}
          {thread.state ? (
            <Conversation
              state={thread.state}
              actions={thread.actions}
              online={status === 'connected'}
              windowFromSeq={memoryOpen && memory?.pack.summary ? memory.pack.window.fromSeq : null}
              summaryThroughSeq={memory?.pack.summary?.coveredThroughSeq ?? null}
              loadSeen={loadSeen}
              highlightSeq={highlight?.threadId === threadId ? highlight.seq : null}
              branches={branches}
            />
          ) : (
            <div className="conversation">
              <p className="empty-thread">
                {!session
                  ? 'Starting a guest session…'
                  : draft
                    ? 'A new chat: your first message starts it.'
                    : 'Opening…'}
              </p>
            </div>
          )}
          <Composer
            onSend={draft ? (content) => void startThread(content) : thread.actions.send}
            onStop={thread.actions.stop}
            answering={answering}
            disabled={draft ? !token : !thread.state}
            hint={hint}
          />
        </main>
      )}
      {memoryOpen ? (
        <MemoryPanel
          data={memory}
          error={memoryError}
          thread={live}
          token={token}
          messageAt={messageAt}
          onUnpin={(message) => thread.actions.setPinned(message, false)}
          onShow={showSeqs}
          onClose={() => setMemoryOpen(false)}
          onOpenElsewhere={openAt}
          draft={draft}
        />
      ) : null}
    </div>
  );
}
