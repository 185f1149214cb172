import type { ToolCall } from '../context';
import type { LogPort } from '../ports';
import { ToolError } from './tool-error';
import type { ToolRegistry } from './tool-registry';
import type { Tool, ToolContext } from './types';

export type ToolOutcome =
  { status: 'succeeded'; text: string } | { status: 'failed' | 'timed_out' | 'cancelled'; text: string; error: string };

/** Raised into a tool's signal; tells a timeout from a cancel. */
export class ToolTimeoutError extends Error {
  override name = 'ToolTimeoutError';
}
export class ToolCancelledError extends Error {
  override name = 'ToolCancelledError';
}

/** The text shown for an exception: its message when it is a ToolError, else a generic line (the message is logged). */
export function publicToolError(input: {
  toolName: string;
  error: unknown;
  log: LogPort;
  runId?: string | null;
}): string {
  if (input.error instanceof ToolError) return input.error.message;
  // Only correlates the user's line with the log's: no secret, so no crypto needed (src/core does no I/O).
  const reference = Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
  input.log.warn(
    { err: input.error, tool: input.toolName, runId: input.runId ?? null, reference },
    'tool failed with an internal error',
  );
  return `an internal error (reference ${reference}; the details are in the server log)`;
}

function describeIssues(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues
    .map((issue) => `${issue.path.length ? `${issue.path.map(String).join('.')}: ` : ''}${issue.message}`)
    .join('; ');
}

/** Validates the arguments; a failure is a message the model can act on. */
export function validateArguments(
  tool: Tool,
  args: unknown,
): { ok: true; args: unknown } | { ok: false; error: string } {
  const parsed = tool.schema.safeParse(args);
  if (parsed.success) return { ok: true, args: parsed.data };
  return { ok: false, error: `Invalid arguments for ${tool.name}: ${describeIssues(parsed.error)}` };
}

function failure(status: 'failed' | 'timed_out' | 'cancelled', error: string): ToolOutcome {
  return { status, text: `Error: ${error}`, error };
}

/**
 * Runs one tool call under a time limit and the caller's signal. Never throws: unknown tools, invalid arguments,
 * exceptions, timeouts and cancels become an outcome whose text tells the model what went wrong.
 * A tool that ignores its signal is abandoned when the signal fires (its result is discarded).
 */
export async function executeTool(input: {
  registry: ToolRegistry;
  call: Pick<ToolCall, 'name' | 'args'>;
  context: Omit<ToolContext, 'signal'>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where an internal error's message goes (the outcome carries a generic line). */
  log: LogPort;
}): Promise<ToolOutcome> {
  const tool = input.registry.get(input.call.name);
  if (!tool) {
    const known = input.registry
      .list()
      .map((candidate) => candidate.name)
      .join(', ');
    return failure('failed', `There is no tool named ${input.call.name}. Available tools: ${known}.`);
  }
  const validated = validateArguments(tool, input.call.args);
  if (!validated.ok) return failure('failed', validated.error);
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(input.signal?.reason ?? new ToolCancelledError('cancelled'));
  if (input.signal?.aborted) onOuterAbort();
  input.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const timer = setTimeout(
    () =>
      controller.abort(
        new ToolTimeoutError(`${tool.name} did not finish within ${input.timeoutMs} ms and was stopped.`),
      ),
    input.timeoutMs,
  );
  const aborted = new Promise<never>((_, reject) => {
    const rejectWithReason = () => reject(controller.signal.reason);
    if (controller.signal.aborted) rejectWithReason();
    controller.signal.addEventListener('abort', rejectWithReason, { once: true });
  });
  // Marks the rejection handled when the tool wins the race: when the abort wins, the race below rethrows it.
  // eslint-disable-next-line no-restricted-syntax -- handled by the race, not swallowed
  aborted.catch(() => undefined);
  try {
    const text = await Promise.race([
      tool.run(validated.args, { ...input.context, signal: controller.signal }),
      aborted,
    ]);
    if (typeof text !== 'string') return failure('failed', `${tool.name} returned no text.`);
    return { status: 'succeeded', text };
  } catch (error) {
    const reason: unknown = controller.signal.aborted ? controller.signal.reason : error;
    if (reason instanceof ToolTimeoutError) return failure('timed_out', reason.message);
    if (controller.signal.aborted)
      return failure('cancelled', reason instanceof Error ? reason.message : 'The tool run was cancelled.');
    return failure(
      'failed',
      `${tool.name} failed: ${publicToolError({ toolName: tool.name, error: reason, log: input.log, runId: input.context.runId })}`,
    );
  } finally {
    clearTimeout(timer);
    input.signal?.removeEventListener('abort', onOuterAbort);
  }
}
