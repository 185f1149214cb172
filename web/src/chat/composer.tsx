import { useState, type KeyboardEvent } from 'react';

/** The message box: Enter sends, Shift+Enter adds a line; Stop cancels the running answer. */
export function Composer(props: {
  onSend(content: string): void;
  onStop(): void;
  answering: boolean;
  disabled: boolean;
  hint: string | null;
}) {
  const [text, setText] = useState('');
  const submit = () => {
    if (!text.trim() || props.disabled) return;
    props.onSend(text);
    setText('');
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      submit();
    }
  };
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      {props.hint ? (
        <p className="composer-hint" role="status">
          {props.hint}
        </p>
      ) : null}
      <div className="composer-row">
        <textarea
          aria-label="Message"
          placeholder="Write a message…"
          title="Enter sends, Shift+Enter adds a line"
          value={text}
          rows={Math.min(8, Math.max(1, text.split('\n').length))}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          disabled={props.disabled}
        />
        {props.answering ? (
          <button type="button" className="danger" onClick={props.onStop}>
            Stop
          </button>
        ) : null}
        <button type="submit" className="primary" disabled={props.disabled || !text.trim()}>
          Send
        </button>
      </div>
    </form>
  );
}
