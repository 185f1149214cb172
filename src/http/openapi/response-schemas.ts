import { z } from 'zod';
import type {
  AdminSessionDto,
  AdminThreadDetailDto,
  AdminThreadPageDto,
  AuditPageDto,
  QueueListDto,
  SummaryCorrectedDto,
  SummaryJobAcceptedDto,
  SummaryRevisionListDto,
} from '../../shared/admin-api';
import type {
  ContextPackDto,
  ContextResetResponseDto,
  ForgetResponseDto,
  GuestSessionDto,
  MessageContextDto,
  MessageDto,
  MessagePageDto,
  ModelCallListDto,
  ModelCallPointDto,
  PinResponseDto,
  SearchPageDto,
  RegenerateResponseDto,
  SendMessageResponseDto,
  ServerInfoDto,
  ThreadDetailDto,
  ThreadDto,
  ThreadExportDto,
  ThreadMemorySettingsDto,
  ToolRunDto,
} from '../../shared/api';
import { ERROR_STATUS, type ErrorBody } from '../../shared/errors';

/**
 * Response schemas of the REST API: the source of the OpenAPI document's responses, and what the contract test
 * validates real responses against. Strict objects, so an undocumented field fails the test. Each is checked at
 * compile time against its DTO in src/shared (see `Same` below), so the document and the code cannot drift.
 */

const isoDate = z.iso.datetime({ offset: true });
const uuid = z.string().uuid();
const recalledElsewhereDto = z
  .strictObject({ threadId: uuid, seq: z.number().int(), title: z.string().nullable() })
  .meta({ id: 'RecalledElsewhere' });
const errorCode = z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]);

// Inlined, not a component: zod-to-openapi drops the null of a nullable reference.
export const errorBody = z.strictObject({ code: errorCode, message: z.string() });
/** Every error response: `{ error: { code, message } }` (RATE_LIMITED adds retryAfterSeconds). */
export const errorResponse = z
  .object({
    error: z.object({ code: errorCode, message: z.string(), retryAfterSeconds: z.number().optional() }),
  })
  .meta({ id: 'Error' });

export const toolCallDto = z
  .strictObject({ id: z.string(), name: z.string(), args: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ToolCall' });
const role = z.enum(['system', 'user', 'assistant', 'tool']);

export const messageDto = z
  .strictObject({
    id: uuid,
    threadId: uuid,
    seq: z.number().int().nullable(),
    role,
    content: z.string(),
    toolCalls: z.array(toolCallDto).nullable(),
    toolCallId: z.string().nullable(),
    status: z.enum(['pending', 'streaming', 'complete', 'error', 'cancelled']),
    error: errorBody.nullable(),
    tokens: z.number().int(),
    clientMessageId: z.string().nullable(),
    turnId: uuid.nullable(),
    toolRunId: uuid.nullable(),
    pinned: z.boolean(),
    superseded: z.boolean(),
    deleted: z.boolean(),
    createdAt: isoDate,
    updatedAt: isoDate,
    completedAt: isoDate.nullable(),
  })
  .meta({ id: 'Message' });

const threadFields = {
  id: uuid,
  title: z.string(),
  createdAt: isoDate,
  updatedAt: isoDate,
  lastActivityAt: isoDate,
  memoryMode: z.enum(['summary', 'window-only']),
  contextStartSeq: z.number().int(),
  settings: z
    .strictObject({
      trigger: z.string().nullable(),
      keep: z.string().nullable(),
      summaryPrompt: z.string().nullable(),
      recallTokens: z
        .number()
        .int()
        .nullable()
        .describe("Tokens of the thread's auto-recall slot (0: off); null: RECALL_TOKENS."),
      recallScope: z
        .enum(['thread', 'user'])
        .nullable()
        .describe(
          "Where auto-recall and search_transcript look: this chat only, or all of the user's chats; null: RECALL_SCOPE.",
        ),
    })
    .describe(
      "The thread's own memory policies; null fields use the deployment's (GET /api/threads/{id}/settings shows both).",
    ),
  memoryRebuilding: z.boolean(),
  forkedFrom: z
    .strictObject({ threadId: uuid.nullable(), seq: z.number().int() })
    .nullable()
    .describe('A fork: the thread it was branched from (null once deleted) and the last seq it copied'),
};
export const threadDto = z.strictObject(threadFields).meta({ id: 'Thread' });
export const threadPageDto = z
  .strictObject({ threads: z.array(threadDto), nextCursor: z.string().nullable() })
  .meta({ id: 'ThreadPage' });
export const threadDetailDto = z
  .strictObject({
    ...threadFields,
    messageCount: z.number().int(),
    context: z.strictObject({
      summaryTokens: z.number().int(),
      coveredThroughSeq: z.number().int(),
      revision: z.number().int(),
      windowEntries: z.number().int(),
      windowTokens: z.number().int(),
      foldPending: z.boolean(),
      lastFoldAt: isoDate.nullable(),
      lastFoldError: errorBody.nullable(),
    }),
  })
  .meta({ id: 'ThreadDetail' });

export const messagePageDto = z
  .strictObject({ messages: z.array(messageDto), hasMoreBefore: z.boolean(), hasMoreAfter: z.boolean() })
  .meta({ id: 'MessagePage' });
export const sendMessageResponseDto = z
  .strictObject({
    userMessage: messageDto,
    messages: z.array(messageDto),
    turn: z.strictObject({
      id: uuid,
      status: z.enum(['queued', 'running', 'complete', 'error', 'cancelled']),
      error: errorBody.nullable(),
    }),
  })
  .meta({ id: 'SendMessageResponse' });

export const contextPackDto = z
  .strictObject({
    messages: z.array(
      z.strictObject({
        role,
        content: z.string(),
        toolCalls: z.array(toolCallDto).optional(),
        toolCallId: z.string().optional(),
        seq: z.number().int().optional(),
        tokens: z.number().int(),
        systemPrompt: z
          .strictObject({ hash: z.string(), hidden: z.boolean() })
          .optional()
          .describe(
            'The configured system prompt, split from the summary it is sent with; its content is empty (hidden) unless the caller is an admin',
          ),
      }),
    ),
    tokens: z.number().int(),
    budget: z.number().int().describe('What the pack may use: the corrected budget less the tool definitions'),
    explanation: z
      .strictObject({
        contextWindow: z.number().int(),
        reservedOutputTokens: z.number().int(),
        budget: z.number().int().describe('contextWindow − reservedOutputTokens'),
        correctedBudget: z.number().int().describe('The budget as our estimates count'),
        toolSchemas: z.number().int().describe('The tool definitions the next call offers'),
        parts: z.strictObject({
          systemPrefix: z.number().int(),
          savedMemories: z.number().int(),
          summary: z.number().int(),
          pinned: z.number().int(),
          window: z.number().int(),
          recall: z.number().int(),
          notes: z.number().int(),
          priming: z.number().int(),
        }),
      })
      .describe('How the window, the reserve for the answer, the budget, the tool definitions and the pack relate'),
    omitted: z.number().int(),
    summary: z
      .strictObject({
        text: z.string(),
        tokens: z.number().int(),
        revision: z.number().int(),
        coveredThroughSeq: z.number().int(),
      })
      .nullable(),
    window: z.strictObject({
      fromSeq: z.number().int().nullable(),
      throughSeq: z.number().int().nullable(),
      entries: z.number().int(),
      tokens: z.number().int(),
    }),
    pinnedSeqs: z.array(z.number().int()),
    recalledSeqs: z.array(z.number().int()).describe('Older transcript messages the auto-recall slot shows'),
    recalledElsewhere: z
      .array(recalledElsewhereDto)
      .describe(
        "Messages of the user's other chats the auto-recall slot shows (cross-thread recall; cited [chat:<threadId>#seq])",
      ),
  })
  .meta({ id: 'ContextPack' });

export const serverInfoDto = z
  .strictObject({
    model: z.string(),
    provider: z.enum(['openai-compatible', 'anthropic', 'offline']),
    offline: z.boolean(),
    budget: z.number().int(),
    contextWindow: z.number().int(),
    demoWindow: z.boolean(),
  })
  .meta({ id: 'ServerInfo' });
export const guestSessionDto = z
  .strictObject({
    userId: z.string(),
    token: z.string(),
    expiresAt: isoDate.describe(
      'When the token is refused: refresh before (GUEST_TOKEN_TTL), never past GUEST_MAX_AGE from the first token.',
    ),
  })
  .meta({ id: 'GuestSession' });
export const cancelResultDto = z.strictObject({ cancelled: z.boolean() }).meta({ id: 'CancelResult' });
export const healthDto = z.strictObject({ status: z.literal('ok') });
export const readinessDto = z
  .strictObject({
    status: z.enum(['ready', 'degraded', 'unavailable']),
    postgres: z.enum(['up', 'down']),
    redis: z.enum(['up', 'down']),
  })
  .meta({ id: 'Readiness' });

export const toolRunDto = z
  .strictObject({
    id: uuid,
    threadId: uuid,
    toolCallId: z.string(),
    name: z.string(),
    args: z.record(z.string(), z.unknown()),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled']),
    progress: z.number(),
    progressNote: z.string().nullable(),
    resultPreview: z.string().nullable(),
    resultTokens: z.number().int().nullable(),
    error: z.string().nullable(),
    createdAt: isoDate,
    startedAt: isoDate.nullable(),
    finishedAt: isoDate.nullable(),
  })
  .meta({ id: 'ToolRun' });

// --- admin ---
const summaryAuthor = z.enum(['fold', 'overflow-fallback', 'rebuild', 'admin']);
const count = z.number().int();
export const adminThreadDto = z
  .strictObject({
    id: uuid,
    title: z.string(),
    owner: z.strictObject({ id: z.string(), kind: z.enum(['guest', 'external']) }),
    createdAt: isoDate,
    lastActivityAt: isoDate,
    memoryMode: z.enum(['summary', 'window-only']),
    messageCount: count,
    summary: z.strictObject({ preview: z.string(), tokens: count, revision: count, coveredThroughSeq: count }),
    windowEntries: count,
    windowTokens: count,
    foldLagEntries: count.describe(
      'Window entries waiting to be folded: while the trigger fires, those older than what the keep policy keeps; 0 otherwise.',
    ),
    lastFoldAt: isoDate.nullable(),
    lastFoldError: z.string().nullable(),
  })
  .meta({ id: 'AdminThread' });
export const adminThreadPageDto = z
  .strictObject({ threads: z.array(adminThreadDto), nextCursor: z.string().nullable() })
  .meta({ id: 'AdminThreadPage' });

const revisionInfoFields = {
  revision: count,
  author: summaryAuthor,
  authorId: z.string().nullable(),
  tokens: count,
  fromSeq: count,
  throughSeq: count,
  model: z.string().nullable(),
  tokensIn: count.nullable(),
  tokensOut: count.nullable(),
  durationMs: count.nullable(),
  identifiersKept: count.nullable(),
  identifiersTotal: count.nullable(),
  segments: count.describe(
    'Segments of the text: a fold appends one (the earlier ones stay byte-identical); a consolidation, a rebuild or an admin edit leaves one.',
  ),
  redacted: z.boolean(),
  createdAt: isoDate,
};
export const summaryRevisionInfoDto = z.strictObject(revisionInfoFields).meta({ id: 'SummaryRevisionInfo' });
const lineDiffOp = z.strictObject({ op: z.enum(['equal', 'add', 'remove']), text: z.string() });
export const summaryRevisionDto = z
  .strictObject({
    ...revisionInfoFields,
    text: z.string(),
    diff: z.array(lineDiffOp),
    diffStats: z.strictObject({ added: count, removed: count }),
  })
  .meta({ id: 'SummaryRevision' });
export const summaryRevisionListDto = z
  .strictObject({ revisions: z.array(summaryRevisionDto), hasMoreBefore: z.boolean() })
  .meta({ id: 'SummaryRevisionList' });

export const adminThreadDetailDto = z
  .strictObject({
    thread: z.strictObject({ ...threadFields, ownerId: z.string() }),
    context: z.strictObject({
      summaryText: z.string(),
      summaryTokens: count,
      revision: count,
      coveredThroughSeq: count,
      contextStartSeq: count,
      memoryMode: z.enum(['summary', 'window-only']),
      version: count,
      windowEntries: count,
      windowTokens: count,
      pinnedEntries: count,
      foldPending: z.boolean(),
      foldReasons: z.array(z.string()),
      lastFoldAt: isoDate.nullable(),
      lastFoldError: z.string().nullable(),
      settings: z.strictObject({
        trigger: z.string().optional(),
        keep: z.string().optional(),
        summaryPrompt: z.string().optional(),
        recallTokens: count.optional(),
        recallScope: z.enum(['thread', 'user']).optional(),
      }),
    }),
    pack: contextPackDto,
    transcript: z.strictObject({ messages: count, tokens: count, characters: count, lastSeq: count }),
    revisions: z.array(summaryRevisionInfoDto),
    lineage: z
      .strictObject({
        parent: z.strictObject({ threadId: uuid, title: z.string(), seq: count }).nullable(),
        forks: z.array(z.strictObject({ threadId: uuid, title: z.string(), seq: count, createdAt: isoDate })),
      })
      .describe(
        'Fork lineage: the thread this one was branched from (and at which seq), and the forks branched from it',
      ),
  })
  .meta({ id: 'AdminThreadDetail' });

export const summaryJobAcceptedDto = z
  .strictObject({ jobId: z.string().nullable() })
  .meta({ id: 'SummaryJobAccepted' });
export const summaryCorrectedDto = z
  .strictObject({ revision: count, tokens: count, fromSeq: count, throughSeq: count })
  .meta({ id: 'SummaryCorrected' });
export const queueListDto = z
  .strictObject({
    queues: z.array(
      z.strictObject({
        name: z.string(),
        waiting: count,
        active: count,
        failed: count,
        delayed: count,
        completed: count,
      }),
    ),
  })
  .meta({ id: 'QueueList' });
export const auditPageDto = z
  .strictObject({
    entries: z.array(
      z.strictObject({
        id: uuid,
        actor: z.string(),
        action: z.string(),
        threadId: uuid.nullable(),
        details: z.record(z.string(), z.unknown()),
        createdAt: isoDate,
      }),
    ),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'AuditPage' });
export const adminSessionDto = z.strictObject({ actor: z.string(), expiresAt: isoDate }).meta({ id: 'AdminSession' });

// --- memory controls, export ---
const memoryMode = z.enum(['summary', 'window-only']);
export const threadMemorySettingsDto = z
  .strictObject({
    trigger: z
      .string()
      .nullable()
      .describe("The thread's fold trigger (`tokens=3000`, `messages=12`, ...); null: the deployment default."),
    keep: z.string().nullable().describe('What a fold keeps verbatim; null: the deployment default.'),
    memory: memoryMode,
    summaryPrompt: z.string().nullable().describe('Set by admins only; null: the default prompt.'),
    recallTokens: count
      .nullable()
      .describe("Tokens of the thread's auto-recall slot (0: off); null: the deployment default (RECALL_TOKENS)."),
    recallScope: z
      .enum(['thread', 'user'])
      .nullable()
      .describe(
        "Where auto-recall and search_transcript look: this chat only, or all of the user's chats (never the chat's own forks and parent); null: the deployment default (RECALL_SCOPE).",
      ),
    defaults: z
      .strictObject({
        trigger: z.string(),
        keep: z.string(),
        recallTokens: count,
        recallScope: z.enum(['thread', 'user']),
      })
      .describe("The deployment's policies, used where the thread has none."),
    pinnedTokens: count,
    pinnedMaxTokens: count,
    thread: threadDto,
  })
  .meta({ id: 'ThreadMemorySettings' });
export const pinResponseDto = z
  .strictObject({
    messages: z
      .array(messageDto)
      .describe('Every message whose pin changed (a whole tool exchange for a message of one).'),
    pinnedTokens: count,
    pinnedMaxTokens: count,
  })
  .meta({ id: 'PinResponse' });
export const forgetResponseDto = z
  .strictObject({
    messages: z.array(messageDto).describe('The tombstones: content erased, `deleted: true`.'),
    memoryRebuilding: z
      .boolean()
      .describe('The summary covered a forgotten message: it is withdrawn and being rebuilt.'),
    thread: threadDto,
    copies: z
      .array(z.strictObject({ threadId: uuid, title: z.string(), messageId: uuid, seq: z.number().int() }))
      .describe(
        'Copies of the forgotten messages that other threads of the user still hold (a fork and its parent share their history): forget them there with the same route.',
      ),
  })
  .meta({ id: 'ForgetResponse' });
export const contextResetResponseDto = z
  .strictObject({
    seq: count.describe('The context start after the call: the model sees nothing before this seq.'),
    thread: threadDto,
  })
  .meta({ id: 'ContextResetResponse' });
export const regenerateResponseDto = z
  .strictObject({
    ...sendMessageResponseDto.shape,
    superseded: z
      .array(messageDto)
      .describe('The answers replaced: kept in the transcript, marked superseded, out of the window.'),
  })
  .meta({ id: 'RegenerateResponse' });
export const threadExportDto = z
  .strictObject({
    format: z.literal('chat-thread-export'),
    version: z.literal(1),
    exportedAt: isoDate,
    thread: threadDto,
    summaryRevisions: z.array(
      z.strictObject({
        revision: count,
        author: summaryAuthor,
        fromSeq: count,
        throughSeq: count,
        tokens: count,
        model: z.string().nullable(),
        redacted: z.boolean(),
        text: z.string().nullable().describe('null when redacted (it covered a deleted message).'),
        createdAt: isoDate,
      }),
    ),
    messages: z.array(messageDto).describe('The whole transcript, tombstones and superseded answers included.'),
  })
  .meta({ id: 'ThreadExport' });
export const modelCallPointDto = z
  .strictObject({
    id: uuid,
    at: isoDate,
    purpose: z.enum(['chat', 'summary', 'condense', 'auxiliary', 'title']),
    model: z.string(),
    messageId: uuid.nullable().describe('The answer a finished chat call produced ("What the model saw" opens on it).'),
    promptTokens: count.describe("The provider's reported figure, else our estimate (see promptTokensSource)."),
    promptTokensSource: z.enum(['provider', 'estimate']),
    estimatedPromptTokens: count.describe('Our estimate (the context pack plus tool schemas for chat calls).'),
    transcriptTokens: count.describe('Tokens of the whole transcript through the last message stored before the call.'),
    throughSeq: count.describe('The highest transcript seq at the time of the call.'),
    reportedCachedTokens: count
      .nullable()
      .describe('Prompt tokens the provider reported as read from its prompt cache; null when not reported.'),
    reportedCacheWriteTokens: count
      .nullable()
      .describe('Prompt tokens the provider reported as written to its prompt cache (Claude); null when not reported.'),
    toolSchemaTokens: count
      .nullable()
      .describe("Our estimate of the tool definitions' share of the prompt; null where the call kept no parts."),
  })
  .meta({ id: 'ModelCallPoint' });
export const modelCallListDto = z
  .strictObject({ calls: z.array(modelCallPointDto), nextCursor: z.string().nullable() })
  .meta({ id: 'ModelCallList' });
export const searchPageDto = z
  .strictObject({
    hits: z.array(
      z.strictObject({
        threadId: uuid,
        threadTitle: z.string(),
        messageId: uuid,
        seq: count,
        role,
        createdAt: isoDate,
        snippet: z.string().describe('Up to two fragments of the message around the matched words, joined by " … ".'),
        highlights: z
          .array(z.strictObject({ start: count, end: count }))
          .describe('[start, end) UTF-16 offsets into snippet of the matched words.'),
        forkCopy: z
          .boolean()
          .describe("A fork's copy of a message of the thread it was branched from: each thread lists its own once."),
      }),
    ),
    nextCursor: z
      .string()
      .nullable()
      .describe('Pass as cursor, with the same q, for the next page; null on the last page.'),
  })
  .meta({ id: 'SearchPage' });

const seenRole = z.enum(['tool', 'system']);
export const messageContextDto = z
  .strictObject({
    messageId: uuid,
    model: z.string(),
    at: isoDate,
    estimatedPromptTokens: count,
    reportedPromptTokens: count.nullable(),
    reportedCompletionTokens: count.nullable(),
    reportedCachedTokens: count
      .nullable()
      .describe('Prompt tokens the provider reported as read from its prompt cache; null when not reported.'),
    reportedCacheWriteTokens: count
      .nullable()
      .describe('Prompt tokens the provider reported as written to its prompt cache (Claude); null when not reported.'),
    promptDivergence: z
      .strictObject({
        messageIndex: z
          .number()
          .int()
          .min(-1)
          .describe(
            "The first pack message that differs from the previous call's prompt; -1: the tool schemas differ.",
          ),
        tokensBefore: count.describe("Estimated prompt tokens before it: what a provider's prompt cache could reuse."),
      })
      .nullable()
      .describe(
        "Where the prompt first differed from the thread's previous call (computed at call time); null when unknown.",
      ),
    overflowRetry: z.boolean(),
    omitted: count,
    systemPrefix: z
      .strictObject({
        hash: z.string(),
        text: z.string().nullable().describe("The system prompt's text: admins only (null for a thread owner)"),
        tokens: count,
      })
      .nullable(),
    summary: z
      .strictObject({
        revision: count,
        text: z.string().nullable(),
        tokens: count,
        fromSeq: count,
        throughSeq: count,
        redacted: z.boolean(),
      })
      .nullable(),
    windowSeqs: z.array(count),
    pinnedSeqs: z.array(count),
    recalledSeqs: z.array(count),
    recalledElsewhere: z.array(recalledElsewhereDto),
    savedMemories: z
      .array(z.strictObject({ id: uuid, text: z.string().nullable() }))
      .describe("The user's saved memories the pack carried, as they stand now (text null once deleted)"),
    messages: z.array(
      z.strictObject({
        seq: count,
        role,
        place: z.enum(['window', 'pinned', 'recalled']),
        messageId: uuid.nullable(),
        forgotten: z.boolean(),
        content: z.string().nullable(),
      }),
    ),
    toolResults: z.array(
      z.strictObject({
        seq: count,
        role: seenRole,
        toolCallId: z.string().nullable(),
        content: z.string().nullable(),
        tokens: count,
        forgotten: z.boolean(),
      }),
    ),
    parts: z
      .strictObject({
        systemPrefix: count,
        savedMemories: count.optional(),
        summary: count,
        pinned: count,
        window: count,
        recall: count.optional(),
        notes: count,
        priming: count,
        toolSchemas: count,
      })
      .nullable(),
    limits: z
      .strictObject({ contextWindow: count, reservedOutputTokens: count, budget: count })
      .describe("The deployment's window, reserve for the answer and budget now, which the parts are read against"),
  })
  .meta({ id: 'MessageContext' });

// Compile-time agreement between each schema and its DTO, both directions: a field added to one and not the other
// fails `tsc`.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type _SchemaAgreement = [
  Assert<Same<z.infer<typeof errorBody>, ErrorBody>>,
  Assert<Same<z.infer<typeof guestSessionDto>, GuestSessionDto>>,
  Assert<Same<z.infer<typeof messageDto>, MessageDto>>,
  Assert<Same<z.infer<typeof threadDto>, ThreadDto>>,
  Assert<Same<z.infer<typeof threadDetailDto>, ThreadDetailDto>>,
  Assert<Same<z.infer<typeof messagePageDto>, MessagePageDto>>,
  Assert<Same<z.infer<typeof sendMessageResponseDto>, SendMessageResponseDto>>,
  Assert<Same<z.infer<typeof contextPackDto>, ContextPackDto>>,
  Assert<Same<z.infer<typeof serverInfoDto>, ServerInfoDto>>,
  Assert<Same<z.infer<typeof toolRunDto>, ToolRunDto>>,
  Assert<Same<z.infer<typeof adminThreadPageDto>, AdminThreadPageDto>>,
  Assert<Same<z.infer<typeof adminThreadDetailDto>, AdminThreadDetailDto>>,
  Assert<Same<z.infer<typeof summaryRevisionListDto>, SummaryRevisionListDto>>,
  Assert<Same<z.infer<typeof summaryJobAcceptedDto>, SummaryJobAcceptedDto>>,
  Assert<Same<z.infer<typeof summaryCorrectedDto>, SummaryCorrectedDto>>,
  Assert<Same<z.infer<typeof queueListDto>, QueueListDto>>,
  Assert<Same<z.infer<typeof auditPageDto>, AuditPageDto>>,
  Assert<Same<z.infer<typeof adminSessionDto>, AdminSessionDto>>,
  Assert<Same<z.infer<typeof threadMemorySettingsDto>, ThreadMemorySettingsDto>>,
  Assert<Same<z.infer<typeof pinResponseDto>, PinResponseDto>>,
  Assert<Same<z.infer<typeof forgetResponseDto>, ForgetResponseDto>>,
  Assert<Same<z.infer<typeof contextResetResponseDto>, ContextResetResponseDto>>,
  Assert<Same<z.infer<typeof regenerateResponseDto>, RegenerateResponseDto>>,
  Assert<Same<z.infer<typeof regenerateResponseDto>, SendMessageResponseDto & { superseded: MessageDto[] }>>,
  Assert<Same<z.infer<typeof threadExportDto>, ThreadExportDto>>,
  Assert<Same<z.infer<typeof modelCallPointDto>, ModelCallPointDto>>,
  Assert<Same<z.infer<typeof modelCallListDto>, ModelCallListDto>>,
  Assert<Same<z.infer<typeof messageContextDto>, MessageContextDto>>,
  Assert<Same<z.infer<typeof searchPageDto>, SearchPageDto>>,
];
