import { AppError } from '../../core/errors/app-error';

/**
 * MAX_CLIENT_TOOL_DESCRIPTION_CHARS' default: the longest description of one client tool. Claude Code 2.1's longest runs to
 * 18,780 characters.
 */
export const DEFAULT_MAX_TOOL_DESCRIPTION_CHARS = 32_000;

/** A client tool's description, or 413 naming `field` past `maxChars` (MAX_CLIENT_TOOL_DESCRIPTION_CHARS). */
export function checkToolDescription(description: string | null | undefined, maxChars: number, field: string): void {
  if (!description || description.length <= maxChars) return;
  throw new AppError(
    'TOO_LARGE',
    `${field}: ${description.length} characters; the limit is ${maxChars} (MAX_CLIENT_TOOL_DESCRIPTION_CHARS).`,
    { details: { field } },
  );
}
