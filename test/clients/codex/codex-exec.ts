/**
 * Codex CLI against the server (issue 39): `codex exec`, then `codex exec resume --last`, through `npm start` with the
 * OpenAI stub upstream (Codex speaks Responses to us; we speak Chat Completions to the stub). Codex is the pinned
 * `@openai/codex` of this folder's own package (~420 MB, too large for the project's install): `.ci/run` installs it
 * (`npm ci` here) and runs this after the reliability suite, not in `npm test`. From the project's root:
 *   (cd test/clients/codex && npm ci) && node --import tsx test/clients/codex/codex-exec.ts
 * Prints PASS/FAIL lines; exits non-zero on any failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort } from '../../../src/app/embedded/process-tools';
import { makeServiceTempDir } from '../../../src/app/embedded/service-temp-dir';
import { RECALL_HEADING } from '../../../src/core/context/build-recall-slot';
import { wireContentText } from '../../../src/llm/count-chat-tokens';
import { lastUserText, replyWithText, startOpenAIStub, type StubRequest } from '../../support/openai-stub';
import { classifyRequest, summaryResponder } from '../../support/summary-stub';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const CODEX = path.join(import.meta.dirname, 'node_modules/.bin/codex');
const FIRST_PROMPT = 'Remember the word PELICAN-41 and say hello.';
const SECOND_PROMPT = 'Which word did I ask you to remember? (turn TWO-77)';
const FIRST_ANSWER = 'Hello! I will remember PELICAN-41.';
const SECOND_ANSWER = 'You asked me to remember PELICAN-41.';
/** Each Codex run's limit (its first run starts its helpers; a loaded CI machine is slow). */
const CODEX_TIMEOUT_MS = 240_000;
/** What a bounded pack is here: Codex's ~40 KB of instructions and two short turns, far below the model's window. */
const MAX_PACK_TOKENS = 40_000;

let failures = 0;
function check(ok: boolean, what: string, detail = ''): void {
  if (!ok) failures += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'}: ${what}${!ok && detail ? `\n  ${detail}` : ''}`);
}

/** The stub answers each prompt with its own answer (the second one wins once both are in the pack's last turn). */
const chat = (request: StubRequest) => {
  const text = lastUserText(request.body);
  if (text.includes('TWO-77')) return replyWithText(SECOND_ANSWER);
  if (text.includes('PELICAN-41')) return replyWithText(FIRST_ANSWER);
  return replyWithText('stub reply (no known prompt)');
};

interface Server {
  baseUrl: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** `npm start` as a user runs it: embedded Postgres and Redis under a fresh DATA_DIR, the stub as the endpoint. */
async function startServer(stubUrl: string): Promise<Server> {
  const dataDir = await makeServiceTempDir('codex-client-');
  const port = await findFreePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: 'info',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    OPENAI_BASE_URL: stubUrl,
    OPENAI_API_KEY: 'stub-key',
    CHAT_MODEL: 'gpt-4o-mini',
    RATE_LIMIT_PER_MINUTE: '100000',
    TOOL_ROUNDS_PER_MINUTE: '100000',
    API_REQUESTS_PER_MINUTE: '100000',
    SPEND_LIMITS: 'off',
  };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'AUTH_SECRET', 'ADMIN_TOKEN']) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('npm_')) delete env[name];
  const child = spawn('npm', ['start'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(-child.pid, 'SIGINT');
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 240_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${baseUrl}/readyz`).then(
      async (response) => response.ok && ((await response.json()) as { status?: string }).status === 'ready',
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`npm start was not ready within 240 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return { baseUrl, output: () => output, stop };
}

interface CodexRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One Codex command with our server as its provider, stdin closed (it would wait to read it otherwise). */
function runCodex(options: { args: string[]; baseUrl: string; token: string; home: string; cwd: string }) {
  const provider = `model_providers.split={name="split",base_url="${options.baseUrl}/v1",env_key="SPLIT_TOKEN",wire_api="responses"}`;
  const args = [
    'exec',
    '--skip-git-repo-check',
    '-c',
    'model_provider=split',
    '-c',
    provider,
    '-c',
    'model=gpt-4o-mini',
    ...options.args,
  ];
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, CODEX_HOME: options.home };
  env.SPLIT_TOKEN = options.token;
  return new Promise<CodexRun>((resolve) => {
    const child: ChildProcess = spawn(CODEX, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CODEX_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function api<T>(baseUrl: string, pathname: string, token: string): Promise<T> {
  const response = await fetch(`${baseUrl}${pathname}`, { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) throw new Error(`GET ${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

interface MessageDto {
  role: string;
  content: string;
}

function count(texts: string[], needle: string): number {
  return texts.filter((text) => text.includes(needle)).length;
}

async function checkHistory(baseUrl: string, token: string): Promise<void> {
  const { threads } = await api<{ threads: { id: string }[] }>(baseUrl, '/api/threads?limit=100', token);
  check(threads.length === 1, 'the Codex session is one thread', `threads: ${threads.length}`);
  const thread = threads[0];
  if (!thread) return;
  const { messages } = await api<{ messages: MessageDto[] }>(
    baseUrl,
    `/api/threads/${thread.id}/messages?limit=100`,
    token,
  );
  const users = messages.filter((message) => message.role === 'user').map((message) => message.content);
  const answers = messages.filter((message) => message.role === 'assistant').map((message) => message.content);
  const listing = messages.map((message) => `${message.role}: ${message.content.slice(-80)}`).join('\n  ');
  check(
    count(users, FIRST_PROMPT) === 1 && count(users, SECOND_PROMPT) === 1 && users.length === 2,
    'the history holds each prompt once, as two user messages',
    listing,
  );
  check(
    count(answers, FIRST_ANSWER) === 1 && count(answers, SECOND_ANSWER) === 1 && answers.length === 2,
    "the history holds each of the stub's answers once",
    listing,
  );
}

function checkPacks(requests: StubRequest[]): void {
  const chats = requests.filter((request) => request.kind === 'chat');
  check(chats.length === 2, 'the upstream saw one chat request a Codex run', `chat requests: ${chats.length}`);
  const largest = Math.max(0, ...chats.map((request) => request.promptTokens));
  check(largest <= MAX_PACK_TOKENS, `the upstream packs are bounded (largest ${largest} tokens)`);
  const last = chats.at(-1);
  if (!last) return;
  // The turns themselves, not the recall slot (which quotes matching messages of any of the user's chats).
  const turns = last.body.messages
    .map((message) => ({ role: message.role, text: wireContentText(message.content) }))
    .filter((message) => !message.text.startsWith(RECALL_HEADING));
  const users = turns.filter((message) => message.role === 'user').map((message) => message.text);
  const answers = turns.filter((message) => message.role === 'assistant').map((message) => message.text);
  check(
    count(users, FIRST_PROMPT) === 1 && count(users, SECOND_PROMPT) === 1 && count(answers, FIRST_ANSWER) === 1,
    "the resumed turn's pack holds the first exchange and the new prompt, each once",
    turns.map((message) => `${message.role}: ${message.text.slice(-80)}`).join('\n  '),
  );
}

async function main(): Promise<void> {
  if (!existsSync(CODEX)) throw new Error(`${CODEX} is missing: run \`npm ci\` in ${import.meta.dirname} first`);
  const stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder({ chat }) });
  // Codex refuses a CODEX_HOME under the OS temporary directory: a folder of this package's own (git-ignored).
  const home = path.join(import.meta.dirname, `.codex-home-${randomBytes(4).toString('hex')}`);
  await mkdir(home);
  const workspace = await mkdtemp(path.join(tmpdir(), 'codex-workspace-'));
  let server: Server | undefined;
  try {
    server = await startServer(stub.url);
    console.log(`server: npm start on ${server.baseUrl}, upstream stub ${stub.url}`);
    const guest = await fetch(`${server.baseUrl}/api/auth/guest`, { method: 'POST' });
    const { token } = (await guest.json()) as { token: string };
    const common = { baseUrl: server.baseUrl, token, home, cwd: workspace };

    const first = await runCodex({ ...common, args: [FIRST_PROMPT] });
    check(first.code === 0, '`codex exec` exits 0', `exit ${first.code}\n${first.stderr.slice(-3000)}`);
    check(first.stdout.includes(FIRST_ANSWER), '`codex exec` prints the first answer', first.stdout.slice(-2000));

    const second = await runCodex({ ...common, args: ['resume', '--last', SECOND_PROMPT] });
    check(
      second.code === 0,
      '`codex exec resume --last` exits 0',
      `exit ${second.code}\n${second.stderr.slice(-3000)}`,
    );
    check(
      second.stdout.includes(SECOND_ANSWER),
      '`codex exec resume --last` prints the second answer',
      second.stdout.slice(-2000),
    );

    await checkHistory(server.baseUrl, token);
    checkPacks(stub.requests);
  } catch (error) {
    check(false, 'the run completed', error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    if (failures > 0 && server) console.log(`server log (last 4000 characters):\n${server.output().slice(-4000)}`);
    await server?.stop();
    await stub.close();
    await rm(home, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  }
  console.log(failures === 0 ? 'codex client: all checks passed' : `codex client: ${failures} check(s) failed`);
  process.exitCode = failures === 0 ? 0 : 1;
}

await main();
