import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema, type Tool as ListedTool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/tool-sources';
import { CoalescedRefresh } from './coalesced-refresh';
import type { LogPort } from '../core/ports';
import { ToolError } from '../core/tools/tool-error';

export type { ListedTool };

export type McpServerState = 'starting' | 'ready' | 'restarting' | 'stopped';

/** What admins see of a server. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: McpServerState;
  tools: number;
  restarts: number;
  lastError: string | null;
  nextAttemptAt: Date | null;
  supportsTasks: boolean;
  /** The stdio child's process id (null over HTTP or while down). */
  pid: number | null;
}

/** Raised by a tool whose server is down: the model reads the message. */
export class McpServerUnavailableError extends ToolError {
  override name = 'McpServerUnavailableError';
}

export interface McpConnectionOptions {
  log: LogPort;
  /** Called with the server's tools after each (re)connect and each tools-changed notification. */
  onTools(tools: ListedTool[]): void;
  /** First restart delay; doubles per failed attempt up to `maxBackoffMs`. Default 500 ms / 30 s. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** Time allowed to connect and list the tools. Default 15 s. */
  connectTimeoutMs?: number;
}

const CLIENT_INFO = { name: 'split-context-chat', version: '0.1.0' };

/** `tools/list` pages read at most, and tools kept at most, per listing: a server cannot page us forever. */
export const MCP_MAX_LIST_PAGES = 20;
export const MCP_MAX_TOOLS = 500;
/** Tools-changed notifications within this many ms are one refresh (and refreshes never overlap). */
export const MCP_REFRESH_DEBOUNCE_MS = 500;

/**
 * One MCP server, kept connected: connects (stdio child process or Streamable HTTP), lists its tools, refreshes
 * them on a tools-changed notification, and after a crash (the stdio child exits, an HTTP call fails at the
 * transport) reconnects with exponential backoff. Meanwhile `client()` throws a clear error the model reads.
 */
/**
 * Reads a server's `tools/list` pages: at most MCP_MAX_LIST_PAGES pages and MCP_MAX_TOOLS tools, so a server that
 * pages forever (or lists thousands of tools) cannot hold a connection or fill memory. `truncated`: there was more.
 */
export async function readToolPages<Tool>(
  listPage: (cursor: string | undefined) => Promise<{ tools: Tool[]; nextCursor?: string }>,
): Promise<{ tools: Tool[]; pages: number; truncated: boolean }> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await listPage(cursor);
    tools.push(...page.tools);
    cursor = page.nextCursor;
    pages += 1;
  } while (cursor && pages < MCP_MAX_LIST_PAGES && tools.length < MCP_MAX_TOOLS);
  return { tools: tools.slice(0, MCP_MAX_TOOLS), pages, truncated: Boolean(cursor) || tools.length > MCP_MAX_TOOLS };
}

export class McpServerConnection {
  private current: Client | null = null;
  private state: McpServerState = 'starting';
  private attempt = 0;
  private restarts = 0;
  private lastError: string | null = null;
  private nextAttemptAt: Date | null = null;
  private timer: NodeJS.Timeout | undefined;
  private toolCount = 0;
  private closing = false;
  private stdio: StdioClientTransport | null = null;
  /** A tools-changed refresh waiting for its debounce, or running; a notification meanwhile asks for one more. */
  private refresher: CoalescedRefresh | null = null;

  constructor(
    readonly config: McpServerConfig,
    private readonly options: McpConnectionOptions,
  ) {}

  get name(): string {
    return this.config.name;
  }

  /** The first connection attempt; a failure schedules retries and resolves (the start goes on without the server). */
  async start(): Promise<boolean> {
    return this.connect();
  }

  status(): McpServerStatus {
    return {
      name: this.config.name,
      transport: this.config.transport,
      state: this.state,
      tools: this.toolCount,
      restarts: this.restarts,
      lastError: this.lastError,
      nextAttemptAt: this.nextAttemptAt,
      supportsTasks: this.supportsTasks(),
      pid: this.state === 'ready' ? (this.stdio?.pid ?? null) : null,
    };
  }

  supportsTasks(): boolean {
    return Boolean(this.current?.getServerCapabilities()?.tasks?.requests?.tools?.call);
  }

  /** The connected client; throws McpServerUnavailableError while the server is down or restarting. */
  client(): Client {
    if (this.current && this.state === 'ready') return this.current;
    const when = this.nextAttemptAt
      ? ` (next attempt in ${Math.max(0, Math.ceil((this.nextAttemptAt.getTime() - Date.now()) / 1000))} s)`
      : '';
    throw new McpServerUnavailableError(
      `the MCP server ${this.config.name} is not available right now: ${this.state === 'stopped' ? 'it was stopped' : `it is restarting${when}`}. Try again later.`,
    );
  }

  /** A call failed at the transport (connection refused, stream broken): reconnect. */
  reportTransportFailure(error: unknown): void {
    if (this.state !== 'ready' || this.closing) return;
    this.lastError = error instanceof Error ? error.message : String(error);
    this.options.log.warn(
      { server: this.config.name, err: error },
      'MCP server call failed at the transport: reconnecting',
    );
    this.dropClient();
    this.scheduleRestart();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.state = 'stopped';
    clearTimeout(this.timer);
    this.refresher?.stop();
    const client = this.current;
    this.current = null;
    await client
      ?.close()
      .catch((error: unknown) =>
        this.options.log.debug({ err: error, server: this.config.name }, 'closing an MCP client failed'),
      );
  }

  private transport() {
    const { config } = this;
    if (config.transport === 'stdio') {
      // The SDK adds the safe defaults (PATH, HOME, ...) to `env`: the child never inherits this server's secrets.
      this.stdio = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: config.env,
        stderr: 'ignore',
        ...(config.cwd ? { cwd: config.cwd } : {}),
      });
      return this.stdio;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
  }

  private async connect(): Promise<boolean> {
    if (this.closing) return false;
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const timeoutMs = this.options.connectTimeoutMs ?? 15_000;
    try {
      await client.connect(this.transport(), { timeout: timeoutMs });
      const tools = await this.listAll(client, timeoutMs);
      if (this.closing) {
        await client.close();
        return false;
      }
      client.onclose = () => this.onClosed(client);
      this.refresher?.stop();
      const refresher = new CoalescedRefresh({
        run: () => this.refresh(client),
        delayMs: MCP_REFRESH_DEBOUNCE_MS,
        active: () => client === this.current,
      });
      this.refresher = refresher;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => refresher.request());
      this.current = client;
      this.state = 'ready';
      this.attempt = 0;
      this.nextAttemptAt = null;
      this.toolCount = tools.length;
      this.options.onTools(tools);
      this.options.log.info(
        { server: this.config.name, tools: tools.length, tasks: this.supportsTasks() },
        'MCP server connected',
      );
      return true;
    } catch (error) {
      this.lastError = error instanceof Error ? error.message : String(error);
      this.options.log.warn({ server: this.config.name, err: error }, 'MCP server could not be connected');
      await client
        .close()
        .catch((closeError: unknown) =>
          this.options.log.debug(
            { server: this.config.name, err: closeError },
            'closing the unconnected MCP client failed',
          ),
        );
      this.scheduleRestart();
      return false;
    }
  }

  private async listAll(client: Client, timeoutMs: number): Promise<ListedTool[]> {
    const listed = await readToolPages((cursor) =>
      client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs }),
    );
    if (listed.truncated) {
      this.options.log.warn(
        { server: this.config.name, pages: listed.pages, maxPages: MCP_MAX_LIST_PAGES, maxTools: MCP_MAX_TOOLS },
        'MCP server lists more tools than we read: the rest are left out',
      );
    }
    return listed.tools;
  }

  private async refresh(client: Client): Promise<void> {
    try {
      const tools = await this.listAll(client, this.options.connectTimeoutMs ?? 15_000);
      if (client !== this.current) return;
      this.toolCount = tools.length;
      this.options.onTools(tools);
      this.options.log.info(
        { server: this.config.name, tools: tools.length },
        'MCP server tools changed: list refreshed',
      );
    } catch (error) {
      this.options.log.warn({ server: this.config.name, err: error }, 'could not refresh the MCP server tools');
    }
  }

  private onClosed(client: Client): void {
    if (client !== this.current || this.closing) return;
    this.lastError = this.lastError ?? 'the connection closed';
    this.options.log.warn({ server: this.config.name }, 'MCP server connection closed: restarting');
    this.current = null;
    this.scheduleRestart();
  }

  private dropClient(): void {
    const client = this.current;
    this.current = null;
    if (client) {
      client.onclose = undefined;
      void client
        .close()
        .catch((closeError: unknown) =>
          this.options.log.debug(
            { server: this.config.name, err: closeError },
            'closing the dropped MCP client failed',
          ),
        );
    }
  }

  private scheduleRestart(): void {
    if (this.closing) return;
    this.state = this.state === 'starting' && this.restarts === 0 && this.attempt === 0 ? 'starting' : 'restarting';
    const delay = Math.min(this.options.maxBackoffMs ?? 30_000, (this.options.backoffMs ?? 500) * 2 ** this.attempt);
    this.attempt += 1;
    this.nextAttemptAt = new Date(Date.now() + delay);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.restarts += 1;
      this.state = 'restarting';
      void this.connect();
    }, delay);
    this.timer.unref();
  }
}
