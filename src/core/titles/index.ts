export { cleanModelTitle } from './clean-model-title';
export { finishTitle, TITLE_MAX_CHARS, TITLE_MAX_WORDS, titleFromWords } from './title-from-words';
export { TITLE_SYSTEM_PROMPT, titlePromptMessages } from './title-prompt';
export { titleThread, type TitleDeps, type TitleOutcome } from './title-thread';
