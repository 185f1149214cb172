import type { MessageCopyDto, ThreadDto } from '../../../src/shared/api';

/** Where a branch came from: a link back to the original conversation. */
export function ForkOrigin(props: { thread: ThreadDto; parentTitle: string | null; onOpen(threadId: string): void }) {
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
export function CopiesNotice(props: { copies: MessageCopyDto[]; onForgetThere(): void; onDismiss(): void }) {
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

/** An error the user can dismiss. */
export function ErrorBanner(props: { message: string; onDismiss(): void }) {
  return (
    <div className="banner error" role="alert">
      {props.message}
      <button type="button" className="icon" aria-label="Dismiss" onClick={props.onDismiss}>
        ✕
      </button>
    </div>
  );
}
