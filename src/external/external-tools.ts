import { z } from 'zod';
import type { ExternalToolConfig } from '../config/tool-sources';
import type { BackgroundWork, Tool } from '../core/tools/types';
import { signedHeaders } from './webhook-signature';

const ANY_ARGUMENTS = z.record(z.string(), z.unknown());

/** The header naming the idempotency key of a run request (the run id): a repeated key is the same run. */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

/**
 * POSTs a signed request to a runner. A redirect is a failure (`redirect: 'manual'`): the signed body and its
 * signature are never carried to another address.
 */
async function post(input: {
  url: string;
  payload: unknown;
  secret: string;
  runId: string;
  signal: AbortSignal;
}): Promise<void> {
  const body = JSON.stringify(input.payload);
  const target = new URL(input.url);
  const headers = {
    ...signedHeaders(input.secret, { method: 'POST', path: target.pathname, runId: input.runId, body }),
    [IDEMPOTENCY_HEADER]: input.runId,
  };
  const response = await fetch(target, { method: 'POST', headers, body, signal: input.signal, redirect: 'manual' });
  await response.body?.cancel();
  if (response.status >= 300 && response.status < 400) {
    throw new Error(
      `the runner at ${target.origin} answered a redirect (${response.status}); runner requests are not redirected`,
    );
  }
  if (!response.ok) throw new Error(`the runner at ${target.origin} answered ${response.status}`);
}

/**
 * Tools run by external runners (`EXTERNAL_TOOLS`, mode `external`), runner protocol v2: the tools worker stores the
 * run's task id (the run id, which is the idempotency key) and deadline, then POSTs
 * `{runId, idempotencyKey, tool, args, threadId, callbackUrl}` signed with the runner's secret (its `secret`, else
 * TOOL_WEBHOOK_SECRET) and ends; a worker that died before the runner answered POSTs again with the same key. The
 * runner reports to `POST <callbackUrl>/progress` and `<callbackUrl>/result`, signed the same way; a cancel is POSTed to
 * the runner's cancel URL (`<url>/cancel` unless `cancelUrl` is set). Poll jobs only enforce the deadline.
 */
export function externalTools(
  configs: readonly ExternalToolConfig[],
  options: { secret: string | undefined; publicBaseUrl: string; timeoutMs: number },
): Tool[] {
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  return configs.map((config): Tool => {
    const timeoutMs = config.timeoutMs ?? options.timeoutMs;
    const secret = config.secret ?? options.secret;
    if (!secret) throw new Error(`EXTERNAL_TOOLS: ${config.name} has no secret and TOOL_WEBHOOK_SECRET is not set`);
    const background: BackgroundWork = {
      // Only the deadline is checked between callbacks.
      pollIntervalMs: Math.min(5000, Math.max(250, Math.floor(timeoutMs / 4))),
      presetTaskId: (runId) => runId,
      async submit(args, context) {
        const payload = {
          runId: context.runId,
          idempotencyKey: context.runId,
          tool: config.name,
          args,
          threadId: context.threadId,
          callbackUrl: `${base}/api/tool-runs/${context.runId}`,
        };
        await post({ url: config.url, payload, secret, runId: context.runId, signal: context.signal });
        return { taskId: context.runId };
      },
      async cancel(taskId, context) {
        await post({
          url: config.cancelUrl ?? `${config.url.replace(/\/+$/, '')}/cancel`,
          payload: { runId: taskId, tool: config.name },
          secret,
          runId: taskId,
          signal: context.signal,
        });
      },
    };
    return {
      name: config.name,
      description: config.description,
      schema: ANY_ARGUMENTS,
      parameters: { ...config.parameters, type: 'object' },
      mode: 'async',
      timeoutMs,
      source: { kind: 'external', url: config.url },
      background,
      run: async () => {
        throw new Error('an external tool runs on its runner');
      },
    };
  });
}

/** The signing secret of the runner of tool `name` (its own, else TOOL_WEBHOOK_SECRET); null for no such runner. */
export function runnerSecretOf(
  configs: readonly ExternalToolConfig[],
  fallback: string | undefined,
  name: string,
): string | null {
  const config = configs.find((candidate) => candidate.name === name);
  return config ? (config.secret ?? fallback ?? null) : null;
}
