import type { Thread, TranscriptMessage } from '../domain/types';
import { toMessageDto, toThreadDto } from '../dto/api-dto';
import type { ExportedRevisionDto, ThreadExportDto } from '../../shared/api';
import type { ExportReader, SummaryRevisionRecord } from '../ports';

export type ExportFormat = 'json' | 'markdown';

/** Rows read per query: memory stays flat whatever the thread's size. */
const MESSAGE_BATCH = 500;
const REVISION_BATCH = 100;

async function* pagesOf<T>(read: (after: number) => Promise<T[]>, keyOf: (item: T) => number): AsyncGenerator<T[]> {
  let after = 0;
  for (;;) {
    const page = await read(after);
    if (page.length === 0) return;
    yield page;
    const last = page.at(-1);
    if (!last) return;
    after = keyOf(last);
  }
}

function revisions(reader: ExportReader, threadId: string): AsyncGenerator<SummaryRevisionRecord[]> {
  return pagesOf(
    (after) => reader.revisionsAfter({ threadId, afterRevision: after, limit: REVISION_BATCH }),
    (revision) => revision.revision,
  );
}

function messages(reader: ExportReader, threadId: string): AsyncGenerator<TranscriptMessage[]> {
  return pagesOf(
    (after) => reader.messagesAfter({ threadId, afterSeq: after, limit: MESSAGE_BATCH }),
    (message) => message.seq ?? Number.MAX_SAFE_INTEGER,
  );
}

function revisionJson(revision: SummaryRevisionRecord): string {
  const exported: ExportedRevisionDto = {
    revision: revision.revision,
    author: revision.author,
    fromSeq: revision.fromSeq,
    throughSeq: revision.throughSeq,
    tokens: revision.tokens,
    model: revision.model,
    redacted: revision.redacted,
    text: revision.redacted ? null : revision.text,
    createdAt: revision.createdAt.toISOString(),
  };
  return JSON.stringify(exported);
}

/**
 * JSON (a `ThreadExportDto`): one object; each revision and each message on its own line, so the output can also be
 * read line by line. Written in pieces, so the head is typed here and the arrays element by element.
 */
async function* exportJson(thread: Thread, reader: ExportReader, now: Date): AsyncGenerator<string> {
  const head: Pick<ThreadExportDto, 'format' | 'version' | 'exportedAt'> = {
    format: 'chat-thread-export',
    version: 1,
    exportedAt: now.toISOString(),
  };
  yield `${JSON.stringify(head).slice(0, -1)},\n"thread":${JSON.stringify(toThreadDto(thread))},\n"summaryRevisions":[`;
  let first = true;
  for await (const page of revisions(reader, thread.id)) {
    yield page.map((revision) => `${first ? ((first = false), '\n') : ',\n'}${revisionJson(revision)}`).join('');
  }
  yield '\n],\n"messages":[';
  first = true;
  for await (const page of messages(reader, thread.id)) {
    yield page
      .map((message) => `${first ? ((first = false), '\n') : ',\n'}${JSON.stringify(toMessageDto(message))}`)
      .join('');
  }
  yield '\n]}\n';
}

function markdownHeader(thread: Thread, now: Date): string {
  const { settings } = thread;
  return [
    `# ${thread.title}`,
    '',
    `- Thread: ${thread.id}`,
    `- Exported: ${now.toISOString()}`,
    `- Memory: ${thread.memoryMode}; trigger: ${settings.trigger ?? 'deployment default'}; keep: ${settings.keep ?? 'deployment default'}${settings.summaryPrompt ? '; custom summary prompt' : ''}`,
    `- The model's context starts at message #${thread.contextStartSeq}`,
    ...(thread.forkedFrom
      ? [
          `- Forked from thread ${thread.forkedFrom.threadId ?? '(deleted)'} at message #${thread.forkedFrom.seq}: messages #1–#${thread.forkedFrom.seq} are copies of its own`,
        ]
      : []),
    '',
    '## Summary revisions',
    '',
  ].join('\n');
}

function revisionMarkdown(revision: SummaryRevisionRecord): string {
  const body = revision.redacted ? '_Redacted: it covered a deleted message._' : revision.text;
  return `### Revision ${revision.revision}: #${revision.fromSeq}–#${revision.throughSeq} (${revision.author}, ${revision.createdAt.toISOString()})\n\n${body}\n\n`;
}

function messageMarkdown(message: TranscriptMessage, contextStartSeq: number): string {
  const divider =
    message.seq === contextStartSeq && contextStartSeq > 1
      ? '---\n\n_A fresh context starts here: the model sees nothing above._\n\n---\n\n'
      : '';
  const flags = [
    message.pinned ? 'pinned' : '',
    message.superseded ? 'superseded' : '',
    message.status !== 'complete' ? message.status : '',
  ].filter(Boolean);
  const heading = `### #${message.seq} · ${message.role} · ${message.createdAt.toISOString()}${flags.length > 0 ? ` · ${flags.join(', ')}` : ''}`;
  if (message.deleted) return `${divider}${heading}\n\n_deleted_\n\n`;
  const calls = (message.toolCalls ?? [])
    .map((call) => `\n\n> called \`${call.name}\` (${call.id}) with \`${JSON.stringify(call.args)}\``)
    .join('');
  return `${divider}${heading}\n\n${message.content}${calls}\n\n`;
}

async function* exportMarkdown(thread: Thread, reader: ExportReader, now: Date): AsyncGenerator<string> {
  yield markdownHeader(thread, now);
  let any = false;
  for await (const page of revisions(reader, thread.id)) {
    any = true;
    yield page.map(revisionMarkdown).join('');
  }
  if (!any) yield '_None._\n\n';
  yield '## Transcript\n\n';
  for await (const page of messages(reader, thread.id))
    yield page.map((message) => messageMarkdown(message, thread.contextStartSeq)).join('');
}

/**
 * A thread's export: its settings, every summary revision with its range (redacted ones without text) and the
 * whole transcript (tombstones included), as chunks of text read a page at a time, so a 100,000-message thread is
 * exported in flat memory. The caller writes each chunk as it comes (respecting backpressure).
 */
export function exportThread(
  input: { thread: Thread; format: ExportFormat; now?: Date },
  reader: ExportReader,
): AsyncGenerator<string> {
  const now = input.now ?? new Date();
  return input.format === 'json' ? exportJson(input.thread, reader, now) : exportMarkdown(input.thread, reader, now);
}
