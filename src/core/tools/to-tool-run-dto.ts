import type { ToolRunDto } from '../../shared/api';
import type { ToolRun } from '../ports';

const PREVIEW_CHARS = 500;

/** Domain -> DTO: the run as clients see it (a preview of the result, never the whole text). */
export function toToolRunDto(run: ToolRun): ToolRunDto {
  return {
    id: run.id,
    threadId: run.threadId,
    toolCallId: run.toolCallId,
    name: run.name,
    args: run.args,
    status: run.status,
    progress: run.progress,
    progressNote: run.progressNote,
    resultPreview:
      run.result === null
        ? null
        : run.result.length > PREVIEW_CHARS
          ? `${run.result.slice(0, PREVIEW_CHARS)}…`
          : run.result,
    resultTokens: run.resultTokens,
    error: run.error,
    createdAt: run.createdAt.toISOString(),
    startedAt: run.startedAt?.toISOString() ?? null,
    finishedAt: run.finishedAt?.toISOString() ?? null,
  };
}
