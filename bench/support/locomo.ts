import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * LoCoMo (Maharana et al., ACL 2024) as bench:recall reads it. The data is CC BY-NC and never copied into the
 * project: LOCOMO_PATH (default ../shared/data/locomo/locomo-dev.json, resolved relative to the project root).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
export const LOCOMO_PATH = path.resolve(ROOT, process.env.LOCOMO_PATH ?? '../shared/data/locomo/locomo-dev.json');

/** One turn: speaker_a as `user`, speaker_b as `assistant`, the text prefixed with the speaker's name and the session's date. */
export interface Turn {
  diaId: string;
  role: 'user' | 'assistant';
  content: string;
  at: Date;
  session: number;
}
/** A question with its evidence turns and the reference answer (bench:cache's stub answers with it). */
export interface Question {
  question: string;
  evidence: string[];
  category: number;
  answer: string;
}
export interface Conversation {
  id: string;
  turns: Turn[];
  questions: Question[];
}

/** "1:56 pm on 8 May, 2023" -> a Date (UTC). */
export function sessionDate(text: string): Date {
  const match = /(\d+):(\d+)\s*(am|pm) on (\d+) (\w+),? (\d{4})/i.exec(text);
  if (!match) return new Date(0);
  const [, hours, minutes, half, day, month, year] = match;
  const hour = (Number(hours) % 12) + (half?.toLowerCase() === 'pm' ? 12 : 0);
  return new Date(`${day} ${month} ${year} ${hour}:${minutes} UTC`);
}

/** The conversations of LOCOMO_PATH with their questions of categories 1–4 (those with evidence turns). */
export async function loadLocomo(): Promise<Conversation[]> {
  const raw = JSON.parse(await readFile(LOCOMO_PATH, 'utf8')) as {
    sample_id?: string;
    conversation: Record<string, unknown>;
    qa: (Omit<Question, 'answer'> & { evidence?: string[]; answer?: unknown })[];
  }[];
  return raw.map((sample, index) => {
    const conversation = sample.conversation;
    const speakerA = String(conversation.speaker_a);
    const turns: Turn[] = [];
    for (let session = 1; Array.isArray(conversation[`session_${session}`]); session += 1) {
      const date = String(conversation[`session_${session}_date_time`] ?? '');
      for (const turn of conversation[`session_${session}`] as { speaker: string; dia_id: string; text: string }[]) {
        turns.push({
          diaId: turn.dia_id,
          role: turn.speaker === speakerA ? 'user' : 'assistant',
          content: `${turn.speaker} (${date}): ${turn.text}`,
          at: sessionDate(date),
          session,
        });
      }
    }
    const questions = sample.qa
      .filter((qa) => qa.category >= 1 && qa.category <= 4 && (qa.evidence?.length ?? 0) > 0)
      .map((qa) => ({
        question: String(qa.question),
        evidence: qa.evidence ?? [],
        category: qa.category,
        answer: String(qa.answer ?? ''),
      }));
    return { id: sample.sample_id ?? `conversation-${index + 1}`, turns, questions };
  });
}

/** One line of the printed table: name, value, and when there is a target, the target and met / MISSED. */
export function line(
  name: string,
  value: number,
  target?: { op: '>=' | '<=' | '<'; value: number },
  digits = 3,
  note?: string,
): string {
  const shown = Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
  const tail = note ? `  (${note})` : '';
  if (!target) return `${name.padEnd(64)} ${shown.padStart(8)}${tail}`;
  const met =
    target.op === '>=' ? value >= target.value : target.op === '<=' ? value <= target.value : value < target.value;
  return `${name.padEnd(64)} ${shown.padStart(8)}  target ${target.op} ${target.value}  ${met ? 'met' : 'MISSED'}${tail}`;
}
