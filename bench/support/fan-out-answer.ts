/** The fan-out bench's answer: `count` deltas, `part 0 `, `part 1 `, ... (the stub streams them, the tabs check them). */
export function fanOutChunks(count: number): string[] {
  return Array.from({ length: count }, (_, index) => `part ${index} `);
}
