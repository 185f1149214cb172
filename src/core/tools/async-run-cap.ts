/** Thrown by `createRun` when a cap is reached: counted and refused under the owner's lock, never exceeded. */
export class AsyncRunCapReached extends Error {
  override name = 'AsyncRunCapReached';
  constructor(readonly which: 'thread' | 'user') {
    super(`the ${which}'s background tool runs are at their cap`);
  }
}
