import { describe, expect, it } from 'vitest';
import { MCP_MAX_LIST_PAGES, MCP_MAX_TOOLS, readToolPages } from './mcp-server-connection';

/** A server whose `tools/list` has `pageSize` tools a page and a next cursor until `lastPage` (forever when unset). */
function pagingServer(pageSize: number, lastPage?: number) {
  const asked: (string | undefined)[] = [];
  const listPage = async (cursor: string | undefined) => {
    asked.push(cursor);
    const page = cursor === undefined ? 1 : Number(cursor);
    const tools = Array.from({ length: pageSize }, (_, index) => ({ name: `tool_${page}_${index}` }));
    return lastPage !== undefined && page >= lastPage ? { tools } : { tools, nextCursor: String(page + 1) };
  };
  return { asked, listPage };
}

describe('readToolPages', () => {
  it('follows the cursor to the last page', async () => {
    const server = pagingServer(3, 4);
    const listed = await readToolPages(server.listPage);
    expect(listed).toMatchObject({ pages: 4, truncated: false });
    expect(listed.tools).toHaveLength(12);
    expect(server.asked).toEqual([undefined, '2', '3', '4']);
  });

  it('stops after MCP_MAX_LIST_PAGES pages of a server that pages forever', async () => {
    const server = pagingServer(1);
    const listed = await readToolPages(server.listPage);
    expect(server.asked).toHaveLength(MCP_MAX_LIST_PAGES);
    expect(listed).toMatchObject({ pages: MCP_MAX_LIST_PAGES, truncated: true });
  });

  it('keeps at most MCP_MAX_TOOLS tools, stopping once it has them', async () => {
    const server = pagingServer(MCP_MAX_TOOLS - 100);
    const listed = await readToolPages(server.listPage);
    expect(server.asked).toHaveLength(2);
    expect(listed.tools).toHaveLength(MCP_MAX_TOOLS);
    expect(listed.truncated).toBe(true);
  });
});
