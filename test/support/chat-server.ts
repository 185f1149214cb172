import { afterAll, beforeAll } from 'vitest';
import { startOpenAIStub, type OpenAIStub, type OpenAIStubOptions } from './openai-stub';
import { openTab, type Tab } from './socket-client';
import { startTestApp, type TestApp } from './test-app';

type TestAppOptions = NonNullable<Parameters<typeof startTestApp>[0]>;

export interface ChatServerOptions {
  /** Options of the OpenAI-compatible stub the app talks to (default: it echoes the last user message). */
  stub?: OpenAIStubOptions;
  /** Environment of the app, over `OPENAI_BASE_URL` = the stub; a function is called in `beforeAll` (after the stub started). */
  env?: Record<string, string> | ((stub: OpenAIStub) => Record<string, string>);
  /** The app's other options (mode, tuning, ...), as `startTestApp` takes them. */
  app?: Omit<TestAppOptions, 'env'>;
}

/** What `useChatServer` gives a test file: each field is there once the file's `beforeAll` hooks ran. */
export interface ChatServer {
  readonly stub: OpenAIStub;
  readonly app: TestApp;
  /** The token of a guest signed in at start. */
  readonly token: string;
  readonly userId: string;
  /** Another guest (a stranger, a second user). */
  guest(): Promise<{ userId: string; token: string }>;
  /** A socket.io tab on the app (the guest's token by default), closed after the file's tests. */
  openTab(token?: string, options?: Parameters<typeof openTab>[2]): Promise<Tab>;
}

/**
 * The shared fixture of the integration tests that talk to the whole server: registers a `beforeAll` that starts an
 * OpenAI stub, the app (fresh database, own Redis prefix) wired to it and a guest, and an `afterAll` that closes the
 * tabs it opened, stops the app and closes the stub. Call it in a `describe` (or at the top of a file).
 */
export function useChatServer(options: ChatServerOptions = {}): ChatServer {
  let started: { stub: OpenAIStub; app: TestApp; guest: { userId: string; token: string } } | null = null;
  const tabs: Tab[] = [];
  let stub: OpenAIStub | null = null;
  let app: TestApp | null = null;

  beforeAll(async () => {
    stub = await startOpenAIStub(options.stub);
    const env = typeof options.env === 'function' ? options.env(stub) : options.env;
    app = await startTestApp({ ...options.app, env: { OPENAI_BASE_URL: stub.url, ...env } });
    started = { stub, app, guest: await app.guest() };
  });
  afterAll(async () => {
    for (const tab of tabs.splice(0)) tab.close();
    await app?.stop();
    await stub?.close();
  });

  const get = () => {
    if (!started)
      throw new Error(
        'useChatServer: the server is not started (use it inside tests or hooks that run after its beforeAll)',
      );
    return started;
  };
  return {
    get stub() {
      return get().stub;
    },
    get app() {
      return get().app;
    },
    get token() {
      return get().guest.token;
    },
    get userId() {
      return get().guest.userId;
    },
    guest: () => get().app.guest(),
    async openTab(token, options) {
      const tab = await openTab(get().app, token ?? get().guest.token, options);
      tabs.push(tab);
      return tab;
    },
  };
}
