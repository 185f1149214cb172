import { z } from 'zod';
import type { ExternalToolConfig } from '../config/tool-sources';
import type { BackgroundWork, Tool } from '../core/tools/types';
import { signedHeaders } from './webhook-signature';

const ANY_ARGUMENTS = z.record(z.string(), z.unknown());

async function post(url: string, payload: unknown, secret: string, signal: AbortSignal): Promise<void> {
  const body = JSON.stringify(payload);
  const response = await fetch(url, { method: 'POST', headers: signedHeaders(secret, body), body, signal });
  if (!response.ok) throw new Error(`the runner at ${new URL(url).origin} answered ${response.status}`);
  await response.body?.cancel();
}

/**
 * Tools run by external runners (`EXTERNAL_TOOLS`, mode `external`): the tools worker POSTs
 * `{runId, tool, args, threadId, callbackUrl}` signed with TOOL_WEBHOOK_SECRET and ends; the runner reports to
 * `POST <callbackUrl>/progress` and `<callbackUrl>/result`, signed the same way; a cancel is POSTed to the runner's
 * cancel URL (`<url>/cancel` unless `cancelUrl` is set). Poll jobs only enforce the deadline.
 */
export function externalTools(configs: readonly ExternalToolConfig[], options: { secret: string; publicBaseUrl: string; timeoutMs: number }): Tool[] {
  const base = options.publicBaseUrl.replace(/\/+$/, '');
  return configs.map((config): Tool => {
    const timeoutMs = config.timeoutMs ?? options.timeoutMs;
    const background: BackgroundWork = {
      // Only the deadline is checked between callbacks.
      pollIntervalMs: Math.min(5000, Math.max(250, Math.floor(timeoutMs / 4))),
      async submit(args, context) {
        await post(config.url, { runId: context.runId, tool: config.name, args, threadId: context.threadId, callbackUrl: `${base}/api/tool-runs/${context.runId}` }, options.secret, context.signal);
        return { taskId: context.runId };
      },
      async cancel(taskId, context) {
        await post(config.cancelUrl ?? `${config.url.replace(/\/+$/, '')}/cancel`, { runId: taskId, tool: config.name }, options.secret, context.signal);
      },
    };
    return {
      name: config.name, description: config.description, schema: ANY_ARGUMENTS, parameters: { ...config.parameters, type: 'object' },
      mode: 'async', timeoutMs, source: { kind: 'external', url: config.url }, background,
      run: async () => { throw new Error('an external tool runs on its runner'); },
    };
  });
}
