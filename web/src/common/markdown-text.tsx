import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';

const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">{children}</a>
  ),
};

/**
 * Markdown (GFM: code blocks, lists, tables, links) rendered safely: raw HTML in the text is never turned
 * into DOM (react-markdown ignores it without rehype-raw) and unsafe link protocols are removed.
 */
export function MarkdownText({ text }: { text: string }) {
  return (
    <div className="markdown">
      <Markdown remarkPlugins={[remarkGfm]} components={components} skipHtml>{text}</Markdown>
    </div>
  );
}
