import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { MakePortStores } from './port-fixtures';
import { codeOf, pause } from './store-fixtures';

/** The AuditStore contract (every admin write is recorded; the admin console lists them newest first). */
export function describeAuditStoreContract(name: string, make: MakePortStores): void {
  describe(`AuditStore contract: ${name}`, () => {
    it("records who did what to which thread, with details, and lists a thread's entries newest first a page at a time", async () => {
      const { audit } = make();
      const threadId = randomUUID();
      const actions = ['pin', 'unpin', 'reset-context', 'rebuild-summary', 'export'];
      for (const action of actions) {
        await audit.record({ actor: 'admin-token', action, threadId, details: { seqs: [1, 2], note: action } });
        await pause(3);
      }
      await audit.record({ actor: 'someone', action: 'other-thread', threadId: randomUUID() });
      const whole = await audit.list({ threadId, limit: 50 });
      expect(whole.items.map((entry) => entry.action)).toEqual([...actions].reverse());
      expect(whole.nextCursor).toBeNull();
      expect(whole.items[0]).toMatchObject({
        actor: 'admin-token',
        threadId,
        details: { seqs: [1, 2], note: 'export' },
      });
      expect(whole.items[0]?.id).toEqual(expect.any(String));
      expect(whole.items[0]?.createdAt).toBeInstanceOf(Date);
      const paged: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 5; page += 1) {
        const result = await audit.list({ threadId, limit: 2, ...(cursor ? { cursor } : {}) });
        paged.push(...result.items.map((entry) => entry.action));
        if (!result.nextCursor) break;
        cursor = result.nextCursor;
      }
      expect(paged).toEqual([...actions].reverse());
    });

    it("records entries without a thread and with no details ({}), and lists every thread's entries without a filter", async () => {
      const { audit } = make();
      const action = `sign-in-${randomUUID()}`;
      await pause(3);
      await audit.record({ actor: 'admin-1', action, threadId: null });
      const [newest] = (await audit.list({ limit: 1 })).items;
      expect(newest).toMatchObject({ actor: 'admin-1', action, threadId: null, details: {} });
    });

    it('refuses a cursor it did not hand out as VALIDATION', async () => {
      const { audit } = make();
      expect(await codeOf(audit.list({ limit: 2, cursor: 'not-a-cursor' }))).toBe('VALIDATION');
    });
  });
}
