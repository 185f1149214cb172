import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, type Page } from '@playwright/test';
import type { AxeResults, Result } from 'axe-core';

/** axe-core's own bundle, injected into the page (no network: it comes from node_modules). */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.0 and 2.1, levels A and AA. */
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/** A control whose accessible name does not start with what a sighted user reads on it (or on its tooltip). */
interface NameMismatch {
  element: string;
  name: string;
  visible: string;
}

/**
 * WCAG 2.5.3 (Label in Name) as this app holds itself to it, stricter than axe's `label-content-name-mismatch` (which
 * asks the name to contain the text and skips text it cannot read as words, such as "#12–#14"): every control's
 * accessible name starts with its visible text, or, for an icon-only control, with its tooltip (`data-tooltip`, else `title`).
 */
async function nameMismatches(page: Page, scope: string): Promise<NameMismatch[]> {
  return page.evaluate((selector) => {
    const collapse = (text: string) => text.replace(/\s+/g, ' ').trim().toLowerCase();
    const root = document.querySelector(selector) ?? document.body;
    const controls = root.querySelectorAll<HTMLElement>(
      'button, a[href], summary, [role="button"], [role="link"], [role="tab"], [role="menuitem"]',
    );
    const found: NameMismatch[] = [];
    for (const control of controls) {
      const label = control.getAttribute('aria-label');
      if (label === null || control.closest('[aria-hidden="true"], [hidden]')) continue;
      // Text without a letter or digit (an icon such as ✕ or ☰) is not a label to speak; an icon-only control's tooltip is.
      const text = collapse(control.innerText);
      const visible = /[\p{L}\p{N}]/u.test(text)
        ? text
        : collapse(control.dataset.tooltip ?? control.getAttribute('title') ?? '');
      if (visible && !collapse(label).startsWith(visible)) {
        found.push({ element: control.outerHTML.slice(0, 160), name: label, visible });
      }
    }
    return found;
  }, scope);
}

function describeViolation(violation: Result): string {
  const nodes = violation.nodes
    .slice(0, 8)
    .map(
      (node) =>
        `    ${node.target.join(' ')}: ${node.failureSummary?.replace(/\s+/g, ' ') ?? ''}\n      ${node.html.slice(0, 200)}`,
    );
  return `  [${violation.impact}] ${violation.id}: ${violation.help} (${violation.nodes.length} elements)\n${nodes.join('\n')}`;
}

/**
 * Runs axe-core on the page (or on `include`, a CSS selector) with the WCAG 2.1 A/AA rules plus
 * `label-content-name-mismatch` enabled by name (experimental, off by default in some versions), and this app's
 * stricter label-in-name check; fails on any serious or critical violation and on any name that does not start
 * with its visible label, printing each.
 */
export async function expectNoAxeViolations(page: Page, options: { include?: string; what: string }): Promise<void> {
  // Evaluated through the DevTools protocol: the app's Content-Security-Policy (script-src 'self') refuses a script tag.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  const results = await page.evaluate(
    async ({ include, tags }) => {
      const axe = (window as unknown as { axe: { run(context: unknown, options: unknown): Promise<AxeResults> } }).axe;
      return axe.run(include ? { include: [include] } : document, {
        runOnly: { type: 'tag', values: tags },
        rules: { 'label-content-name-mismatch': { enabled: true } },
        resultTypes: ['violations'],
      });
    },
    { include: options.include ?? null, tags: TAGS },
  );
  const serious = results.violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  const mismatches = await nameMismatches(page, options.include ?? 'body');
  const report = [
    ...serious.map(describeViolation),
    ...mismatches.map(
      (mismatch) =>
        `  [label-in-name] "${mismatch.name}" does not start with its visible label "${mismatch.visible}"\n      ${mismatch.element}`,
    ),
  ];
  expect(report, `accessibility violations in ${options.what}:\n${report.join('\n')}`).toEqual([]);
}
