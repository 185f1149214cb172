import { finishTitle } from './title-from-words';

/** Words a model's title keeps at most (it was asked for three to six). */
const MODEL_TITLE_MAX_WORDS = 8;

/**
 * The title a model answered, cleaned: its first non-empty line, without a "Title:" label, quotes, markdown or
 * trailing punctuation, at most eight words. Empty when the answer holds no usable title (the caller falls back to
 * the first message's words).
 */
export function cleanModelTitle(answer: string): string {
  const line =
    answer
      .replace(/<think>[\s\S]*?<\/think>/gi, ' ')
      .split('\n')
      .map((candidate) => candidate.trim())
      .find((candidate) => /[\p{L}\p{N}]/u.test(candidate)) ?? '';
  const unlabelled = line.replace(/^[*_#\s]*(chat\s+)?title\s*[:：-]\s*/i, '');
  return finishTitle(unlabelled, MODEL_TITLE_MAX_WORDS);
}
