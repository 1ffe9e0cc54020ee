/**
 * Room to read and words a person uses at JupyterLab's default 250 px sidebar (issue 28, problems 3 and 5),
 * in the light theme, the dark theme and Korean. One scripted turn in "Accept edits" plans (todo), inserts a
 * cell (goes through: the review bar shows it) and runs it (asks: the approval card waits). While the card
 * waits, with the plan, the review bar, the context chips and a queued message showing:
 *
 * - the chat keeps at least 40 % of the panel's height (bounding boxes);
 * - the card and the review bar are one line each until opened, the four answers take two rows;
 * - the queued message's Edit button is inside the sidebar; the header is one line (in Korean too);
 * - the visible text names no tool, error code or cell id (those live behind "details"), before and after
 *   the turn; in the dark theme every visible text of the sidebar reads at 4.5:1 or more.
 *
 * Screenshots of each are attached.
 */
import { expect, test } from '@jupyterlab/galata';
import {
  APIRequestContext,
  BrowserContext,
  Locator,
  Page,
  TestInfo
} from '@playwright/test';

import {
  codeCell,
  contrast,
  loadScript,
  openPanel,
  openWith,
  putNotebook,
  screenshot,
  setLanguage,
  setRightSidebarWidth
} from './helpers';

const WIDTH = 250;
// The tools of the turn, and words that only the model and the details should see.
const INTERNAL =
  /\b(todo|insert_cell|run_cell|edit_cell|delete_cell|move_cell|E_[A-Z_]+|FileWrite|Kernel|null)\b/;
// The server's root: a path the user reads is relative to it.
const ROOT = process.env.HDSP_UI_ROOT_DIR;

interface IRoom {
  page: Page;
  request: APIRequestContext;
  testInfo: TestInfo;
  prefix: string;
  dark: boolean;
  labels: {
    queued: string;
    edit: string;
    allowOnce: string;
    moved: RegExp;
    deleted: RegExp;
  };
}

/** The panel's visible text (closed details and hidden parts are not in innerText). */
async function visibleText(panel: Locator): Promise<string> {
  return panel.evaluate(node => (node as HTMLElement).innerText);
}

async function expectPlainWords(panel: Locator, cellIds: string[]) {
  const text = await visibleText(panel);
  expect(text).not.toMatch(INTERNAL);
  if (ROOT) {
    expect(text).not.toContain(ROOT);
  }
  for (const id of cellIds) {
    expect(text).not.toContain(id);
  }
}

/** Every visible element with text of its own in `panel` reads at 4.5:1 or more. */
async function expectReadableInDark(panel: Locator): Promise<void> {
  const count = await panel.evaluate(node => {
    let index = 0;
    for (const element of Array.from(node.querySelectorAll('*'))) {
      element.removeAttribute('data-hdsp-text');
      const html = element as HTMLElement;
      const own = Array.from(element.childNodes).some(
        child =>
          child.nodeType === Node.TEXT_NODE && child.textContent!.trim() !== ''
      );
      const box = element.getBoundingClientRect();
      if (
        own &&
        box.width > 0 &&
        box.height > 0 &&
        html.offsetParent !== null &&
        getComputedStyle(element).visibility === 'visible'
      ) {
        element.setAttribute('data-hdsp-text', String(index++));
      }
    }
    return index;
  });
  expect(count).toBeGreaterThan(10);
  const low: string[] = [];
  for (const element of await panel.locator('[data-hdsp-text]').all()) {
    const ratio = await contrast(element);
    if (ratio < 4.5) {
      const name = await element.evaluate(
        node =>
          `${node.tagName.toLowerCase()}.${node.className} "${(node.textContent ?? '').trim().slice(0, 30)}"`
      );
      low.push(`${name}: ${ratio.toFixed(2)}`);
    }
  }
  expect(low, 'texts under 4.5:1 in the dark theme').toEqual([]);
}

async function walk(room: IRoom): Promise<void> {
  const { page, request, testInfo, prefix, labels } = room;
  const path = `room-${prefix}.ipynb`;
  await putNotebook(request, path, [
    codeCell(
      'aaaa1111',
      "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2]})"
    ),
    codeCell('bbbb2222', 'df.describe()')
  ]);
  await openWith(page, path, 'Notebook');
  await loadScript(request, [
    {
      tool_calls: [
        [
          'todo',
          JSON.stringify({
            items: [
              { text: 'Look at the data', status: 'done' },
              { text: 'Add a summary cell', status: 'in_progress' },
              { text: 'Run it and explain', status: 'pending' }
            ]
          })
        ]
      ]
    },
    {
      tool_calls: [
        [
          'insert_cell',
          JSON.stringify({ path, source: 'summary = df.sum()\nsummary' })
        ]
      ]
    },
    { tool_calls: [['run_cell', JSON.stringify({ cell_id: 'bbbb2222' })]] },
    // Cell changes go through in "Accept edits": their cards name the cells by number, never by id.
    {
      tool_calls: [
        [
          'move_cell',
          JSON.stringify({ path, cell_id: 'aaaa1111', to_index: -1 })
        ]
      ]
    },
    {
      tool_calls: [
        ['delete_cell', JSON.stringify({ path, cell_id: 'bbbb2222' })]
      ]
    },
    { text: 'The summary is in the new cell.' }
  ]);

  const panel = await openPanel(page);
  await setRightSidebarWidth(page, WIDTH);
  await expect
    .poll(() => panel.evaluate(node => node.getBoundingClientRect().width))
    .toBeLessThanOrEqual(WIDTH + 2);
  await panel.locator('.jp-hdsp-HeaderButton').nth(3).click(); // New chat
  await panel
    .locator(
      '.jp-hdsp-ComposerToolbar select:has(option[value="accept-edits"])'
    )
    .selectOption('accept-edits');
  const input = panel.locator('.jp-hdsp-Composer-input');
  await input.fill('Add a summary of df and run it');
  await input.press('Enter');

  const card = panel.locator('.jp-hdsp-ApprovalCard');
  await expect(card).toBeVisible({ timeout: 60_000 });
  await expect(panel.locator('.jp-hdsp-Plan')).toBeVisible();
  await expect(panel.locator('.jp-hdsp-ReviewBar')).toBeVisible();
  await expect(panel.locator('.jp-hdsp-Chip').first()).toBeVisible();
  // A message written while the card waits is queued.
  await input.fill(
    'And then plot the summary as a bar chart with a title and labelled axes'
  );
  await input.press('Enter');
  const queued = panel.locator('.jp-hdsp-Composer-queued');
  await expect(queued).toContainText(labels.queued);

  const boxes = await panel.evaluate(node => {
    const box = (selector: string) => {
      const found = node.querySelector(selector);
      if (!found) {
        return null;
      }
      const { top, bottom, left, right, height } =
        found.getBoundingClientRect();
      return { top, bottom, left, right, height };
    };
    const tops = (selector: string) =>
      Array.from(node.querySelectorAll(selector)).map(element =>
        Math.round(element.getBoundingClientRect().top)
      );
    const line = (selector: string) =>
      parseFloat(getComputedStyle(node.querySelector(selector)!).lineHeight) ||
      parseFloat(getComputedStyle(node.querySelector(selector)!).fontSize) *
        1.4;
    return {
      panel: box('.jp-hdsp-ChatPanel')!,
      messages: box('.jp-hdsp-MessageList')!,
      cardTitle: box('.jp-hdsp-ApprovalCard-title')!,
      cardLine: line('.jp-hdsp-ApprovalCard-title'),
      buttonTops: tops(
        '.jp-hdsp-ApprovalCard > .jp-hdsp-ApprovalCard-buttons > button'
      ),
      reviewLine: box('.jp-hdsp-ReviewBar-line')!,
      review: box('.jp-hdsp-ReviewBar')!,
      headerTops: tops('.jp-hdsp-ChatPanel-header > *'),
      edit: box('.jp-hdsp-Composer-queued button')!,
      // Parts that hide some of what they hold (squeezed, or scrolled) though they should show it all.
      clipped: ['.jp-hdsp-ApprovalQueue', '.jp-hdsp-Composer'].filter(
        selector => {
          const element = node.querySelector(selector)!;
          return element.scrollHeight > element.clientHeight + 1;
        }
      ),
      // The panel's content ends inside the panel (nothing pushed below it).
      overflow: Array.from(
        node.querySelectorAll('.jp-hdsp-ChatPanel > *')
      ).some(
        element =>
          element.getBoundingClientRect().bottom >
          node.querySelector('.jp-hdsp-ChatPanel')!.getBoundingClientRect()
            .bottom +
            1
      )
    };
  });
  expect(boxes.clipped).toEqual([]);
  // With the card, plan, review bar, queued box, chips, composer, usage and Undo/Stop all showing on a
  // 768 px screen, everything ends inside the panel: the server line waits while the card does, the plan
  // gives way to its title, the box is short while the agent works, usage and buttons share a row.
  expect(boxes.overflow).toBe(false);
  expect(boxes.cardTitle.height).toBeGreaterThanOrEqual(boxes.cardLine * 0.8);
  // The chat keeps at least 40 % of the panel while the card waits.
  expect(boxes.messages.height).toBeGreaterThanOrEqual(
    0.4 * boxes.panel.height
  );
  // One line each until opened; four answers in two rows.
  expect(boxes.cardTitle.height).toBeLessThanOrEqual(boxes.cardLine * 1.5);
  expect(boxes.buttonTops).toHaveLength(4);
  expect(new Set(boxes.buttonTops).size).toBe(2);
  expect(boxes.review.height).toBeLessThanOrEqual(boxes.reviewLine.height + 10);
  expect(boxes.reviewLine.height).toBeLessThanOrEqual(32);
  expect(boxes.review.height).toBeGreaterThanOrEqual(
    boxes.reviewLine.height - 1
  );
  // The header is one line; the queued message's Edit button is inside the sidebar.
  expect(new Set(boxes.headerTops.map(top => Math.round(top / 4))).size).toBe(
    1
  );
  expect(boxes.edit.right).toBeLessThanOrEqual(boxes.panel.right + 1);
  await expect(queued.getByRole('button', { name: labels.edit })).toBeVisible();
  await expectPlainWords(panel, ['aaaa1111', 'bbbb2222']);
  if (room.dark) {
    await expectReadableInDark(panel);
  }
  await screenshot(page, testInfo, `${prefix}-250-waiting.png`);
  // Back into the box (the scripted model has no reply for it), and the box emptied.
  await queued.getByRole('button', { name: labels.edit }).click();
  await expect(queued).toHaveCount(0);
  await input.fill('');

  // Opened, the card says why it asks, in words, and shows the code; the raw call stays in "details".
  await card.locator('.jp-hdsp-ApprovalCard-title').click();
  await expect(card.locator('.jp-hdsp-ApprovalCard-reasons')).toBeVisible();
  await expect(card.getByLabel(/Preview|미리 보기/)).toBeVisible();
  await expectPlainWords(panel, ['aaaa1111', 'bbbb2222']);
  await panel.locator('.jp-hdsp-ReviewBar-toggle').click();
  await expect(panel.locator('.jp-hdsp-ReviewBar-details')).toBeVisible();
  await screenshot(page, testInfo, `${prefix}-250-opened.png`);
  await panel.locator('.jp-hdsp-ReviewBar-toggle').click();

  await card.getByRole('button', { name: labels.allowOnce }).click();
  await expect(
    panel.locator('.jp-hdsp-Message-assistant').first()
  ).toContainText('The summary is in the new cell', { timeout: 60_000 });
  const cards = panel.locator('.jp-hdsp-ToolCard');
  await expect(cards).toHaveCount(5);
  await expect(cards.nth(3)).toContainText(labels.moved);
  await expect(cards.nth(4)).toContainText(labels.deleted);
  // Opened, a card shows what is for the user; the raw call stays in its closed "Details".
  await cards.nth(4).locator('.jp-hdsp-ToolCard-header').click();
  await expect(cards.nth(4).locator('.jp-hdsp-ToolCard-details')).toBeVisible();
  await expectPlainWords(panel, ['aaaa1111', 'bbbb2222']);
  if (room.dark) {
    await expectReadableInDark(panel);
  }
  await screenshot(page, testInfo, `${prefix}-250-done.png`);
}

const THEMES = '/lab/api/settings/@jupyterlab/apputils-extension:themes';

async function setTheme(
  request: APIRequestContext,
  theme: string | null
): Promise<void> {
  const raw = theme ? JSON.stringify({ theme }) : '{}';
  const response = await request.put(THEMES, { data: { raw } });
  expect(response.ok()).toBeTruthy();
}

/**
 * A plain page (not galata's, whose start gives the launcher 15 s: too little on a loaded machine), with its
 * console errors collected; the lab restored. `?reset`: a fresh workspace, not the last test's layout (its
 * notebooks are gone, and reopening them logs 404s).
 */
async function openLab(
  context: BrowserContext,
  baseURL: string,
  menuFile: string
): Promise<{ page: Page; errors: string[] }> {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', message => {
    if (message.type() === 'error') {
      errors.push(message.text());
    }
  });
  page.on('pageerror', error => errors.push(error.message));
  await page.goto(`${baseURL}/lab?reset`);
  await expect(
    page.locator('#jp-MainMenu').getByText(menuFile, { exact: true })
  ).toBeVisible({ timeout: 60_000 });
  await page.waitForFunction(() => (window as any).jupyterapp?.restored, null, {
    timeout: 60_000
  });
  await page.evaluate(() => (window as any).jupyterapp.restored);
  return { page, errors };
}

const ENGLISH = {
  queued: 'Queued',
  edit: 'Edit',
  allowOnce: 'Allow once',
  moved: /cell 3 \(import pandas as pd\)/,
  deleted: /cell \d \(df\.describe\(\)\)/
};

test.describe('room and words at a 250 px sidebar', () => {
  test.afterEach(async ({ request }) => {
    await setTheme(request, null);
    await setLanguage(request, null);
  });

  for (const [prefix, theme, locale] of [
    ['light', 'JupyterLab Light', null],
    ['dark', 'JupyterLab Dark', null],
    ['korean', 'JupyterLab Light', 'ko_KR']
  ] as const) {
    test(prefix, async ({ context, request, baseURL }, testInfo) => {
      await setTheme(request, theme);
      await setLanguage(request, locale);
      const { page, errors } = await openLab(
        context,
        baseURL!,
        locale ? '파일' : 'File'
      );
      await walk({
        page,
        request,
        testInfo,
        prefix,
        dark: prefix === 'dark',
        labels: locale
          ? {
              queued: '대기',
              edit: '편집',
              allowOnce: '한 번 허용',
              moved: /셀 3 \(import pandas as pd\)/,
              deleted: /셀 \d \(df\.describe\(\)\)/
            }
          : ENGLISH
      });
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});
