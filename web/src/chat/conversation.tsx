import { useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import type { ForkSummaryDto, MessageContextDto, MessageDto } from '../../../src/shared/api';
import { MessageBubble } from './message-bubble';
import { contextDivider, isAnswering, regenerableAnswer, type OutgoingMessage, type ThreadState } from './thread-state';
import type { ThreadActions } from './use-thread';

const NEAR_EDGE_PX = 120;

/** Assistant answers that follow async results (a follow-up turn): answer id -> the runs whose results it follows. */
function followUpRuns(messages: MessageDto[]): Map<string, string[]> {
  const links = new Map<string, string[]>();
  let pending: string[] = [];
  for (const message of messages) {
    if (message.seq === null) continue;
    if (message.role === 'system' && message.toolRunId && message.status === 'complete')
      pending.push(message.toolRunId);
    else if (message.role === 'assistant' && pending.length > 0) {
      links.set(message.id, pending);
      pending = [];
    } else if (message.role === 'user') pending = [];
  }
  return links;
}

function OutgoingBubble({ item, online, actions }: { item: OutgoingMessage; online: boolean; actions: ThreadActions }) {
  const label = item.state === 'failed' ? 'not sent' : online ? 'sending…' : 'waiting for the connection';
  return (
    <article className={`bubble user outgoing ${item.state}`} aria-label="Your message, not sent yet">
      <header className="bubble-meta">
        <span className="role">You</span>
        <span className="seq">{label}</span>
      </header>
      <p className="plain-text">{item.content}</p>
      {item.error ? (
        <div className="message-error" role="alert">
          <span>{item.error.message}</span>
          {/* A retry cannot help a message refused for what it is, nor a spent limit before its reset. */}
          {item.error.code !== 'TOO_LARGE' &&
          item.error.code !== 'VALIDATION' &&
          item.error.code !== 'SPEND_LIMIT_REACHED' ? (
            <button type="button" onClick={() => actions.resend(item.clientMessageId)}>
              Retry
            </button>
          ) : null}
          <button type="button" onClick={() => actions.discard(item.clientMessageId)}>
            Discard
          </button>
        </div>
      ) : null}
    </article>
  );
}

/** The "new context" divider: the model sees nothing above it; the transcript keeps it all. */
function ContextDivider(props: { seq: number; undoable: boolean; onUndo(): void }) {
  return (
    <div
      className="context-divider"
      role="separator"
      aria-label={`New context from #${props.seq}: the model sees nothing above`}
    >
      <span>New context · the model sees nothing above this line</span>
      {props.undoable ? (
        <button type="button" className="link" onClick={props.onUndo}>
          Undo
        </button>
      ) : null}
    </div>
  );
}

/** The branches at each shown message: a branch made at a hidden message (a tool result in its card) shows at the last shown one before it. */
function forksByMessage(visible: MessageDto[], forks: ForkSummaryDto[]): Map<string, ForkSummaryDto[]> {
  const byMessage = new Map<string, ForkSummaryDto[]>();
  for (const fork of forks) {
    const at = visible.findLast((message) => message.seq !== null && message.seq <= fork.seq);
    if (at) byMessage.set(at.id, [...(byMessage.get(at.id) ?? []), fork]);
  }
  return byMessage;
}

/** Branching and editing (absent: not offered). */
export interface BranchControls {
  forks: ForkSummaryDto[];
  branch(message: MessageDto): void;
  edit(message: MessageDto, content: string): void;
  openThread(threadId: string): void;
}

/** The lookups tool cards need: results by call id, the calls shown, async notes by run, follow-up answers. */
function useToolLookups(state: ThreadState) {
  const results = useMemo(() => {
    const map = new Map<string, MessageDto>();
    for (const message of state.messages)
      if (message.role === 'tool' && message.toolCallId) map.set(message.toolCallId, message);
    return map;
  }, [state.messages]);
  const callIds = useMemo(
    () => new Set(state.messages.flatMap((message) => message.toolCalls?.map((call) => call.id) ?? [])),
    [state.messages],
  );
  /** Async results (the run's system note), by run id. */
  const notes = useMemo(
    () =>
      new Map(
        state.messages
          .filter((message) => message.role === 'system' && message.toolRunId)
          .map((message) => [message.toolRunId!, message]),
      ),
    [state.messages],
  );
  const followUps = useMemo(() => followUpRuns(state.messages), [state.messages]);
  const cardShown = (message: MessageDto) => {
    const run = message.toolRunId ? state.toolRuns[message.toolRunId] : undefined;
    return run !== undefined && callIds.has(run.toolCallId);
  };
  // Tool results and async run notes show in their cards; a note whose card is not loaded shows on its own.
  const visible = state.messages.filter(
    (message) =>
      !(message.role === 'tool' && message.toolCallId && callIds.has(message.toolCallId)) &&
      !(message.role === 'system' && cardShown(message)),
  );
  return { results, notes, followUps, visible };
}

/**
 * The transcript's scrolling: older pages loaded on scroll up without moving what is on screen, stuck to the bottom
 * while the user is there.
 */
function useTranscriptScroll(state: ThreadState, actions: ThreadActions) {
  const scroller = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const beforePrepend = useRef<{ height: number; top: number; firstId: string | undefined } | null>(null);
  const [loadingOlder, setLoadingOlder] = useState(false);

  const loadOlder = useCallback(async () => {
    const element = scroller.current;
    if (loadingOlder || !state.hasMoreBefore || !element) return;
    setLoadingOlder(true);
    beforePrepend.current = { height: element.scrollHeight, top: element.scrollTop, firstId: state.messages[0]?.id };
    try {
      await actions.loadOlder();
    } finally {
      setLoadingOlder(false);
    }
  }, [actions, loadingOlder, state.hasMoreBefore, state.messages]);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const snapshot = beforePrepend.current;
    if (snapshot && snapshot.firstId !== state.messages[0]?.id) {
      // Older messages were added above: keep the same messages under the reader's eyes.
      element.scrollTop = snapshot.top + (element.scrollHeight - snapshot.height);
      beforePrepend.current = null;
    } else if (stickToBottom.current) {
      element.scrollTop = element.scrollHeight;
    }
  }, [state.messages, state.outgoing]);

  const onScroll = () => {
    const element = scroller.current;
    if (!element) return;
    stickToBottom.current = element.scrollHeight - element.scrollTop - element.clientHeight < NEAR_EDGE_PX;
    if (element.scrollTop < NEAR_EDGE_PX && state.hasMoreBefore) void loadOlder();
  };
  return { scroller, loadingOlder, loadOlder, onScroll };
}

/** Where the model's window starts (the memory panel is open and a summary covers what is above). */
function WindowMarker({ summaryThroughSeq }: { summaryThroughSeq: number | null }) {
  return (
    <div className="window-marker" role="separator" aria-label="The model's window starts here">
      <span>
        Model window starts here
        {summaryThroughSeq ? ` · earlier messages (to #${summaryThroughSeq}) are in the summary` : ''}
      </span>
    </div>
  );
}

export interface ConversationProps {
  state: ThreadState;
  actions: ThreadActions;
  online: boolean;
  windowFromSeq: number | null;
  summaryThroughSeq: number | null;
  loadSeen(messageId: string): Promise<MessageContextDto>;
  highlightSeq?: number | null;
  branches?: BranchControls | undefined;
}

/** One shown message, with the context divider or the window marker above it when they start there. */
function TranscriptEntry(props: {
  message: MessageDto;
  conversation: ConversationProps;
  lookups: ReturnType<typeof useToolLookups>;
  divider: { seq: number } | null;
  answering: boolean;
  regenerable: boolean;
  forks: ForkSummaryDto[] | undefined;
}) {
  const { message, conversation, lookups, divider, answering } = props;
  const { state, actions, branches } = conversation;
  const branchable = message.seq !== null && !answering && ['complete', 'cancelled', 'error'].includes(message.status);
  return (
    <>
      {divider && message.seq === divider.seq ? (
        <ContextDivider seq={divider.seq} undoable={false} onUndo={() => actions.resetContext(true)} />
      ) : null}
      {conversation.windowFromSeq !== null && message.seq === conversation.windowFromSeq ? (
        <WindowMarker summaryThroughSeq={conversation.summaryThroughSeq} />
      ) : null}
      <MessageBubble
        message={message}
        results={lookups.results}
        notes={lookups.notes}
        followUpTo={(lookups.followUps.get(message.id) ?? [])
          .map((runId) => state.toolRuns[runId])
          .filter((run) => run !== undefined)}
        toolRuns={state.toolRuns}
        answering={answering}
        onRetry={actions.retryAnswer}
        onCancelTool={actions.cancelTool}
        onPin={actions.setPinned}
        onForget={actions.forget}
        onRegenerate={props.regenerable ? actions.regenerate : undefined}
        loadSeen={conversation.loadSeen}
        highlighted={message.seq !== null && message.seq === conversation.highlightSeq}
        forks={props.forks}
        onOpenThread={branches?.openThread}
        onBranch={branches && branchable ? branches.branch : undefined}
        onEdit={
          branches && message.role === 'user' && message.seq !== null && !message.deleted ? branches.edit : undefined
        }
      />
    </>
  );
}

/** Above the first message: "Load older messages" while there are more, else the beginning of the conversation. */
function TranscriptStart(props: { state: ThreadState; loadingOlder: boolean; onLoadOlder(): void }) {
  if (props.state.hasMoreBefore)
    return (
      <button type="button" className="load-older" onClick={props.onLoadOlder} disabled={props.loadingOlder}>
        {props.loadingOlder ? 'Loading older messages…' : 'Load older messages'}
      </button>
    );
  return props.state.messages.length > 0 ? <p className="start-of-thread">Beginning of the conversation</p> : null;
}

/**
 * The transcript: bubbles in seq order, older pages loaded on scroll up without moving what is on screen,
 * stuck to the bottom while the user is there, and the memory marker where the model's window starts.
 */
export function Conversation(props: ConversationProps) {
  const { state, actions } = props;
  const { scroller, loadingOlder, loadOlder, onScroll } = useTranscriptScroll(state, actions);
  const lookups = useToolLookups(state);
  const answering = isAnswering(state);
  const divider = contextDivider(state);
  const lastAnswer = answering ? null : regenerableAnswer(state);
  const stored = state.messages.some((message) => message.seq !== null);
  // Nothing after the marker yet: the divider closes the transcript (with Undo until the next message is stored).
  const dividerAtEnd =
    divider !== null && !state.messages.some((message) => message.seq !== null && message.seq >= divider.seq);
  const { visible } = lookups;
  const forksAt = forksByMessage(visible, props.branches?.forks ?? []);
  return (
    <div
      className="conversation"
      ref={scroller}
      onScroll={onScroll}
      role="log"
      aria-label="Conversation"
      aria-live="polite"
      aria-relevant="additions"
    >
      <TranscriptStart state={state} loadingOlder={loadingOlder} onLoadOlder={() => void loadOlder()} />
      {visible.length === 0 && state.outgoing.length === 0 ? (
        <p className="empty-thread">Say hello to start the conversation.</p>
      ) : null}
      {visible.map((message) => (
        <TranscriptEntry
          key={message.id}
          {...{ message, lookups, divider, answering }}
          conversation={props}
          regenerable={lastAnswer?.id === message.id}
          forks={forksAt.get(message.id)}
        />
      ))}
      {divider && dividerAtEnd ? (
        <ContextDivider seq={divider.seq} undoable={divider.undoable} onUndo={() => actions.resetContext(true)} />
      ) : null}
      {state.outgoing.map((item) => (
        <OutgoingBubble key={item.clientMessageId} item={item} online={props.online} actions={actions} />
      ))}
      {stored && !dividerAtEnd && !answering ? (
        <button
          type="button"
          className="new-context"
          onClick={() => actions.resetContext()}
          title="The model forgets everything above; the transcript stays"
        >
          Start a new context here
        </button>
      ) : null}
    </div>
  );
}
