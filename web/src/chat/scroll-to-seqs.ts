const HIGHLIGHT_MS = 2500;
const MAX_FRAMES = 60;

/** The bubbles of seqs `from`..`through` in the conversation; a cited seq shown inside a card falls back to the one before. */
function bubblesOf(range: { from: number; through: number }): HTMLElement[] {
  const all = [...document.querySelectorAll<HTMLElement>('.conversation [data-seq]')];
  const seqOf = (element: HTMLElement) => Number(element.dataset.seq);
  const inRange = all.filter((element) => seqOf(element) >= range.from && seqOf(element) <= range.through);
  if (inRange.length > 0) return inRange;
  const before = all.filter((element) => seqOf(element) < range.from).at(-1);
  return before ? [before] : [];
}

/**
 * Scrolls the transcript to the cited messages, highlights them for a moment and moves focus to the first.
 * Waits a few frames for bubbles that were just loaded to render. Resolves false when none is found.
 */
export async function scrollToSeqs(range: { from: number; through: number }): Promise<boolean> {
  for (let frame = 0; frame < MAX_FRAMES; frame += 1) {
    const bubbles = bubblesOf(range);
    if (bubbles.length > 0 && Number(bubbles[0]!.dataset.seq) <= range.from) {
      bubbles[0]!.scrollIntoView({ block: 'center' });
      bubbles[0]!.focus({ preventScroll: true });
      for (const bubble of bubbles) bubble.classList.add('cited');
      window.setTimeout(() => {
        for (const bubble of bubbles) bubble.classList.remove('cited');
      }, HIGHLIGHT_MS);
      return true;
    }
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  const fallback = bubblesOf(range)[0];
  fallback?.scrollIntoView({ block: 'center' });
  return fallback !== undefined;
}
