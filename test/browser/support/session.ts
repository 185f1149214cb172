import type { Page, TestInfo } from '@playwright/test';

/** Makes the page start as this guest (the app keeps its session in localStorage). */
export async function useGuest(page: Page, guest: { userId: string; token: string }): Promise<void> {
  await page.addInitScript((session) => {
    if (!localStorage.getItem('split-context-chat.session'))
      localStorage.setItem('split-context-chat.session', JSON.stringify(session));
  }, guest);
}

/** A full-page screenshot under test-results/ (the test's output folder). */
export async function screenshot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage: false });
}
