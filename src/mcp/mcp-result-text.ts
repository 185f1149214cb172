/** One content block of an MCP tool result (the fields this server reads). */
interface ContentBlock {
  type: string;
  text?: string;
  mimeType?: string;
  data?: string;
  uri?: string;
  name?: string;
  title?: string;
  description?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

export interface McpCallResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** Old servers answer `{ toolResult }`. */
  toolResult?: unknown;
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text ?? '';
    case 'image':
    case 'audio': {
      const bytes = block.data ? Math.floor((block.data.length * 3) / 4) : 0;
      return `[${block.type}: ${block.mimeType ?? 'unknown type'}, ${bytes} bytes, not shown]`;
    }
    case 'resource_link':
      return `[resource link: ${block.title ?? block.name ?? block.uri ?? ''} <${block.uri ?? ''}>${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? ` ${block.description}` : ''}]`;
    case 'resource': {
      const resource = block.resource;
      if (!resource) return '[resource]';
      if (resource.text !== undefined)
        return `[resource <${resource.uri}>${resource.mimeType ? ` (${resource.mimeType})` : ''}]\n${resource.text}`;
      const bytes = resource.blob ? Math.floor((resource.blob.length * 3) / 4) : 0;
      return `[resource <${resource.uri}>: ${resource.mimeType ?? 'binary'}, ${bytes} bytes, not shown]`;
    }
    default:
      return `[${block.type} content]`;
  }
}

/**
 * An MCP tool result as text for the model: text blocks as they are, images and audio as references (type and
 * size), resource links and embedded resources by URI (embedded text included), structured content as JSON when
 * no text block carries it. `isError` results are marked so the caller reports them as the tool's error.
 */
export function mcpResultText(result: McpCallResult): { text: string; isError: boolean } {
  const parts = (result.content ?? []).map(blockText).filter((part) => part.length > 0);
  const hasText = (result.content ?? []).some((block) => block.type === 'text' && (block.text ?? '').length > 0);
  if (result.structuredContent !== undefined && !hasText) parts.push(JSON.stringify(result.structuredContent, null, 2));
  if (parts.length === 0 && result.toolResult !== undefined)
    parts.push(typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult));
  const text = parts.join('\n');
  return {
    text: text || (result.isError ? 'the tool reported an error without details' : '(the tool returned no content)'),
    isError: result.isError === true,
  };
}
