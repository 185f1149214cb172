import type { ServerInfoDto, ThreadDto } from '../../../src/shared/api';
import type { ChatSocket, ConnectionStatus } from '../api/use-chat-socket';
import { navigate } from '../common/navigation';
import { SpendMeter } from './spend-meter';

const STATUS_TEXT: Record<ConnectionStatus, string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
};

/** The model answering (or the offline demo model), and the demo's small context window. */
function ModelLabel({ info }: { info: ServerInfoDto }) {
  return (
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
        <span className="model-window">{` · ${info.contextWindow.toLocaleString('en-US')}-token demo window`}</span>
      ) : null}
    </span>
  );
}

/** The chat's header: threads toggle, title, model, spend, connection, saved memories and the memory panel toggle. */
export function ChatHeader(props: {
  title: string;
  info: ServerInfoDto | null;
  token: string | null;
  socket: ChatSocket | null;
  status: ConnectionStatus;
  sidebarOpen: boolean;
  onToggleSidebar(): void;
  onMemoriesPage: boolean;
  activeThread: ThreadDto | null;
  memoryOpen: boolean;
  onToggleMemory(): void;
}) {
  const { status, onMemoriesPage, activeThread } = props;
  return (
    <header className="app-header">
      <button
        type="button"
        className="icon sidebar-toggle"
        aria-label="Threads"
        aria-expanded={props.sidebarOpen}
        onClick={props.onToggleSidebar}
      >
        ☰
      </button>
      <h1>{props.title}</h1>
      {props.info ? <ModelLabel info={props.info} /> : null}
      <SpendMeter token={props.token} socket={props.socket} />
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
      <button type="button" className="memory-toggle" aria-pressed={props.memoryOpen} onClick={props.onToggleMemory}>
        Memory
      </button>
    </header>
  );
}
