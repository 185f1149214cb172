import { useCallback, useEffect, useState } from 'react';
import { ApiError } from '../api/api-error';
import { requestJson } from '../api/request-json';
import { navigate, usePath } from '../common/navigation';
import type { QueueListDto } from '../../../src/shared/admin-api';
import { CostsPanel } from './costs-panel';
import { QueueHealth } from './queue-health';
import { ThreadDetail } from './thread-detail';
import { ThreadsTable } from './threads-table';
import { TokenEstimate } from './token-estimate';
import { ToolsPanel } from './tools-panel';

type SignInState = 'checking' | 'signed-out' | 'signed-in';

function SignIn({ onSignedIn }: { onSignedIn(): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await requestJson('/api/admin/session', { method: 'POST', json: { token } });
      setToken('');
      onSignedIn();
    } catch (caught) {
      const apiError = ApiError.from(caught);
      setError(apiError.code === 'UNAUTHORIZED' ? 'That admin token is not valid.' : apiError.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="card sign-in">
      <h1>Admin sign-in</h1>
      <p className="muted">Paste the admin token (ADMIN_TOKEN, or the file named in the server log in development).</p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void submit();
        }}
      >
        <label htmlFor="admin-token">Admin token</label>
        <input
          id="admin-token"
          type="password"
          autoComplete="current-password"
          value={token}
          onChange={(event) => setToken(event.target.value)}
          required
        />
        {error ? (
          <p className="error-text" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="primary" disabled={busy || !token}>
          Sign in
        </button>
      </form>
    </main>
  );
}

/** The admin console at /admin: sign-in (admin session cookie), queue health, threads and tools, thread detail. */
export function AdminApp() {
  const path = usePath();
  const threadId = /^\/admin\/threads\/([\w-]+)$/.exec(path)?.[1] ?? null;
  const [state, setState] = useState<SignInState>('checking');
  const [queues, setQueues] = useState<QueueListDto | null>(null);
  const [queueError, setQueueError] = useState<string | null>(null);

  const loadQueues = useCallback(async () => {
    try {
      setQueues(await requestJson<QueueListDto>('/api/admin/queues'));
      setQueueError(null);
      setState('signed-in');
    } catch (error) {
      const apiError = ApiError.from(error);
      if (apiError.code === 'UNAUTHORIZED' || apiError.code === 'FORBIDDEN') setState('signed-out');
      else {
        setQueueError(apiError.message);
        setState('signed-in');
      }
    }
  }, []);

  useEffect(() => {
    void loadQueues();
  }, [loadQueues]);

  const signOut = async () => {
    // Signed out here whatever the server says: its cookie expires by itself.
    // eslint-disable-next-line no-restricted-syntax -- the browser has no log; the sign-out stands without the server
    await requestJson('/api/admin/session', { method: 'DELETE' }).catch(() => undefined);
    setState('signed-out');
  };

  if (state === 'checking')
    return (
      <main className="admin-app">
        <p>Loading…</p>
      </main>
    );
  if (state === 'signed-out') return <SignIn onSignedIn={() => void loadQueues()} />;
  return (
    <div className="admin-app">
      <header>
        <h1>
          <a
            href="/admin"
            onClick={(event) => {
              event.preventDefault();
              navigate('/admin');
            }}
          >
            Admin console
          </a>
        </h1>
        <a href="/">Back to chat</a>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <QueueHealth queues={queues} error={queueError} onRefresh={() => void loadQueues()} />
      {threadId ? (
        <ThreadDetail threadId={threadId} />
      ) : (
        <>
          <ThreadsTable />
          <CostsPanel />
          <TokenEstimate />
          <ToolsPanel />
        </>
      )}
    </div>
  );
}
