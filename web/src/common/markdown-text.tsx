import { useMemo } from 'react';
import Markdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { citedRange, linkCitations } from './link-citations';

const components: Components = {
  a: ({ href, children }) => (
    <a href={href} target="_blank" rel="noopener noreferrer nofollow">
      {children}
    </a>
  ),
};

/**
 * Markdown (GFM: code blocks, lists, tables, links) rendered safely: raw HTML in the text is never turned
 * into DOM (react-markdown ignores it without rehype-raw) and unsafe link protocols are removed.
 * With `onCite`, summary citations (`[#12]`, `[#40–44]`) become links that call it with the cited seqs.
 */
export function MarkdownText({
  text,
  onCite,
}: {
  text: string;
  onCite?: (range: { from: number; through: number }) => void;
}) {
  const citing = useMemo<Components | null>(
    () =>
      onCite
        ? {
            a: ({ href, children }) => {
              const range = citedRange(href);
              if (!range)
                return (
                  <a href={href} target="_blank" rel="noopener noreferrer nofollow">
                    {children}
                  </a>
                );
              // The name starts with what the link shows (`#12`, `#40–44`, as linkCitations writes it): WCAG 2.5.3, label in name.
              const label =
                range.from === range.through
                  ? `#${range.from}: show message #${range.from}`
                  : `#${range.from}–${range.through}: show messages #${range.from} to #${range.through}`;
              return (
                <a
                  href={href}
                  className="citation"
                  aria-label={label}
                  onClick={(event) => {
                    event.preventDefault();
                    onCite(range);
                  }}
                >
                  {children}
                </a>
              );
            },
          }
        : null,
    [onCite],
  );
  return (
    <div className="markdown">
      <Markdown remarkPlugins={[remarkGfm]} components={citing ?? components} skipHtml>
        {onCite ? linkCitations(text) : text}
      </Markdown>
    </div>
  );
}
