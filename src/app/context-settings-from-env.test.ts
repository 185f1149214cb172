import { describe, expect, it } from 'vitest';
import { ConfigError, loadEnv } from '../config/env';
import { formatCondition, formatTriggerPolicy } from '../core/context';
import { contextSettingsFromEnv, OFFLINE_DEMO_WINDOW_TOKENS, usesOfflineDemoWindow } from './context-settings-from-env';

const endpoint = { OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', CHAT_MODEL: 'llama3.2' };
const settingsOf = (values: Record<string, string>) => contextSettingsFromEnv(loadEnv(values));

function configError(values: Record<string, string>): string {
  try {
    settingsOf(values);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('contextSettingsFromEnv', () => {
  it.each([2048, 4000, 4096, 8192, 32_768, 128_000, 1_000_000])(
    'starts a %i-token window with nothing else set',
    (window) => {
      const settings = settingsOf({ ...endpoint, CONTEXT_MAX_INPUT_TOKENS: String(window) });
      expect(settings.profile.maxInputTokens).toBe(window);
      expect(settings.budget).toBeGreaterThan(window / 2);
      expect(settings.pinnedMaxTokens).toBe(Math.floor(settings.budget / 4));
    },
  );

  it("keeps today's defaults on a 128k model", () => {
    const settings = settingsOf({ ...endpoint, CHAT_MODEL: 'gpt-4o-mini' });
    expect(formatTriggerPolicy(settings.trigger)).toBe('tokens=6000,fraction=0.75');
    expect(formatCondition(settings.keep)).toBe('messages=12');
    expect([settings.summaryMaxTokens, settings.summarizerInputMaxTokens, settings.toolResultInlineTokens]).toEqual([
      1200, 6000, 800,
    ]);
    expect(settings.profile.reservedOutputTokens).toBe(4096);
  });

  it('names both variables and a working value when the reserve does not fit the window', () => {
    const message = configError({ ...endpoint, CONTEXT_MAX_INPUT_TOKENS: '4000', RESERVED_OUTPUT_TOKENS: '4096' });
    expect(message).toContain('RESERVED_OUTPUT_TOKENS=4096');
    expect(message).toContain('CONTEXT_MAX_INPUT_TOKENS=4000');
    expect(message).toContain('the default is 1000');
    expect(message).not.toContain('\n');
  });

  it('names SUMMARY_MAX_TOKENS as a lever when the summary cap leaves the trigger no room', () => {
    const message = configError({ ...endpoint, SUMMARY_TRIGGER: 'tokens=1000', SUMMARY_MAX_TOKENS: '1200' });
    expect(message).toMatch(/SUMMARY_MAX_TOKENS/);
    expect(message).toMatch(/raise SUMMARY_TRIGGER \(e\.g\. tokens=\d+\)/);
    expect(message).not.toContain('\n');
  });

  it('refuses a trigger that fires above the pack budget, with a value that works', () => {
    const message = configError({
      ...endpoint,
      CONTEXT_MAX_INPUT_TOKENS: '4096',
      SUMMARY_TRIGGER: 'tokens=6000',
      SUMMARY_KEEP: 'messages=4',
    });
    expect(message).toContain('above the pack budget of 3072 tokens');
    expect(message).toContain('SUMMARY_TRIGGER=tokens=1536');
  });

  it('refuses a summarizer input larger than the shared window, unless a summary model is set', () => {
    const message = configError({ ...endpoint, CONTEXT_MAX_INPUT_TOKENS: '4096', SUMMARY_INPUT_MAX_TOKENS: '6000' });
    expect(message).toContain('SUMMARY_INPUT_MAX_TOKENS=6000 exceeds');
    expect(
      settingsOf({
        ...endpoint,
        CONTEXT_MAX_INPUT_TOKENS: '4096',
        SUMMARY_INPUT_MAX_TOKENS: '6000',
        SUMMARY_MODEL: 'qwen-long',
      }).summarizerInputMaxTokens,
    ).toBe(6000);
  });

  it('runs the offline model under a small demo window unless a window is set', () => {
    const offline = loadEnv({});
    expect(usesOfflineDemoWindow(offline)).toBe(true);
    const settings = contextSettingsFromEnv(offline);
    expect(settings.profile.maxInputTokens).toBe(OFFLINE_DEMO_WINDOW_TOKENS);
    expect(formatTriggerPolicy(settings.trigger)).toBe('tokens=768,fraction=0.75');
    expect(usesOfflineDemoWindow(loadEnv({ CONTEXT_MAX_INPUT_TOKENS: '128000' }))).toBe(false);
    expect(usesOfflineDemoWindow(loadEnv(endpoint))).toBe(false);
    expect(settingsOf(endpoint).profile.maxInputTokens).toBe(128_000);
  });
});
