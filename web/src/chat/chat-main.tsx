import type { MessageContextDto, MessageCopyDto, ThreadDto } from '../../../src/shared/api';
import type { ConnectionStatus } from '../api/use-chat-socket';
import { CopiesNotice, ErrorBanner, ForkOrigin } from './chat-banners';
import { Composer } from './composer';
import { Conversation, type BranchControls } from './conversation';
import type { MemoryData } from './memory-panel';
import { isAnswering, type ThreadState } from './thread-state';
import type { ThreadActions } from './use-thread';

function connectionHint(status: ConnectionStatus): string | null {
  if (status === 'offline') return 'You are offline: messages are sent when the connection returns.';
  if (status === 'reconnecting') return 'Reconnecting… messages are sent when the connection returns.';
  return null;
}

/** What stands in for the conversation before a thread is shown. */
function EmptyConversation(props: { signedIn: boolean; draft: boolean }) {
  return (
    <div className="conversation">
      <p className="empty-thread">
        {!props.signedIn
          ? 'Starting a guest session…'
          : props.draft
            ? 'A new chat: your first message starts it.'
            : 'Opening…'}
      </p>
    </div>
  );
}

export interface ChatMainProps {
  thread: { state: ThreadState | null; actions: ThreadActions };
  status: ConnectionStatus;
  signedIn: boolean;
  /** A new chat before its first message: the composer's send creates the thread (`onStartThread`). */
  draft: boolean;
  canStartThread: boolean;
  onStartThread(content: string): void;
  threads: ThreadDto[];
  copies: MessageCopyDto[];
  onForgetCopies(): void;
  onKeepCopies(): void;
  memoryOpen: boolean;
  memory: MemoryData | null;
  loadSeen(messageId: string): Promise<MessageContextDto>;
  highlightSeq: number | null;
  branches: BranchControls;
}

/** The banners of the open thread (branch origin, copies, rebuilding memory, its notice). */
function ThreadBanners(props: ChatMainProps) {
  const { state, actions } = props.thread;
  const live = state?.thread ?? null;
  return (
    <>
      {live?.forkedFrom ? (
        <ForkOrigin
          thread={live}
          parentTitle={props.threads.find((candidate) => candidate.id === live.forkedFrom?.threadId)?.title ?? null}
          onOpen={props.branches.openThread}
        />
      ) : null}
      {props.copies.length > 0 ? (
        <CopiesNotice copies={props.copies} onForgetThere={props.onForgetCopies} onDismiss={props.onKeepCopies} />
      ) : null}
      {live?.memoryRebuilding ? (
        <p className="banner info" role="status">
          Memory is being rebuilt after a deletion; answers meanwhile use the recent messages only.
        </p>
      ) : null}
      {state?.notice ? <ErrorBanner message={state.notice.message} onDismiss={actions.dismissNotice} /> : null}
    </>
  );
}

/** The chat column: the open thread's banners, its conversation (or what stands in for it) and the composer. */
export function ChatMain(props: ChatMainProps) {
  const { thread, status, draft, memory } = props;
  return (
    <main className="chat-main">
      <ThreadBanners {...props} />
      {thread.state ? (
        <Conversation
          state={thread.state}
          actions={thread.actions}
          online={status === 'connected'}
          windowFromSeq={props.memoryOpen && memory?.pack.summary ? memory.pack.window.fromSeq : null}
          summaryThroughSeq={memory?.pack.summary?.coveredThroughSeq ?? null}
          loadSeen={props.loadSeen}
          highlightSeq={props.highlightSeq}
          branches={props.branches}
        />
      ) : (
        <EmptyConversation signedIn={props.signedIn} draft={draft} />
      )}
      <Composer
        onSend={draft ? props.onStartThread : thread.actions.send}
        onStop={thread.actions.stop}
        answering={thread.state ? isAnswering(thread.state) : false}
        disabled={draft ? !props.canStartThread : !thread.state}
        hint={connectionHint(status)}
      />
    </main>
  );
}
