import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator, Page, TestInfo } from '@playwright/test';

export const PANEL_ID = 'hdsp-agent-panel';

/**
 * Fail the test on any console error or uncaught exception in the page, except the `expected` ones (e.g. the
 * browser's own line for a refusal the test provokes).
 */
export function failOnConsoleErrors(expected: RegExp[] = []): void {
  const errors: string[] = [];
  test.beforeEach(({ page }) => {
    errors.length = 0;
    page.on('console', message => {
      const text = message.text();
      if (
        message.type() === 'error' &&
        !expected.some(pattern => pattern.test(text))
      ) {
        errors.push(text);
      }
    });
    page.on('pageerror', error => errors.push(error.message));
  });
  test.afterEach(() => {
    expect(errors).toEqual([]);
  });
}

/**
 * One reply of the scripted model (tests/scripted_model.py `reply_from_json`).
 */
export type ScriptedReply =
  | {
      text: string;
      pieces?: number;
      delay?: number;
      reasoning?: string;
      // Stop after this many pieces until releaseModel(): the turn stays busy as long as the test needs.
      hold_after?: number;
    }
  | { tool_calls: [string, string][]; pieces?: number; delay?: number }
  | { error: number; message?: string };

function modelUrl(path: string): string {
  return `http://127.0.0.1:${process.env.HDSP_UI_MODEL_PORT}${path}`;
}

/**
 * Replace the scripted model's queued replies: each test brings its own. `completions`: the model also
 * answers `/v1/completions` (fill-in-the-middle) from the same replies; otherwise that route is a 404.
 */
export async function loadScript(
  request: APIRequestContext,
  replies: ScriptedReply[],
  options: { completions?: boolean } = {}
): Promise<void> {
  const response = await request.post(modelUrl('/script'), {
    data: { replies, ...options }
  });
  expect(response.ok()).toBeTruthy();
}

/** A reply held by `hold_after` goes on. */
export async function releaseModel(request: APIRequestContext): Promise<void> {
  const response = await request.post(modelUrl('/release'));
  expect(response.ok()).toBeTruthy();
}

/**
 * The chat-completion requests the model received since the script was loaded.
 */
export async function modelRequests(
  request: APIRequestContext
): Promise<any[]> {
  const response = await request.get(modelUrl('/requests'));
  return (await response.json()).requests;
}

export function agentPanel(page: IJupyterLabPageFixture | Page): Locator {
  return page.locator(`#${PANEL_ID}`);
}

/**
 * Open the sidebar from its tab and wait until it is connected.
 */
export async function openPanel(
  page: IJupyterLabPageFixture | Page
): Promise<Locator> {
  const panel = agentPanel(page);
  const tab = page.locator(
    `.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`
  );
  // The tab toggles the sidebar. A lab still restoring its layout (a slow machine, a first load in
  // another language) may open the panel itself just after we looked, and our click would close it
  // again: look and click until the message box shows.
  await expect(async () => {
    if (!(await panel.isVisible())) {
      await tab.click();
    }
    await expect(panel.locator('.jp-hdsp-Composer-input')).toBeVisible({
      timeout: 5_000
    });
  }).toPass({ timeout: 60_000 });
  return panel;
}

/**
 * Start a new chat and send a message with Enter.
 */
export async function sendInNewChat(
  panel: Locator,
  message: string,
  labels = { newChat: 'New chat', message: 'Message' }
): Promise<void> {
  await panel.getByRole('button', { name: labels.newChat }).click();
  await expect(panel.locator('.jp-hdsp-Message')).toHaveCount(0);
  const input = panel.getByRole('textbox', { name: labels.message });
  await input.fill(message);
  await input.press('Enter');
  await expect(panel.locator('.jp-hdsp-Message-user').last()).toContainText(
    message
  );
}

export async function screenshot(
  page: IJupyterLabPageFixture | Page,
  testInfo: TestInfo,
  name: string
): Promise<void> {
  const path = testInfo.outputPath(name);
  await page.screenshot({ path });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

/**
 * The contrast ratio (WCAG) of an element's text against what is painted behind it: its own
 * background composited over its ancestors' down to the first opaque one, as the screen shows it.
 */
export async function contrast(locator: Locator): Promise<number> {
  return locator.evaluate((element: Element) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext('2d', { willReadFrequently: true })!;
    const layers: string[] = [];
    for (let node: Element | null = element; node; node = node.parentElement) {
      const color = getComputedStyle(node).backgroundColor;
      layers.unshift(color);
      ctx.clearRect(0, 0, 1, 1);
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, 1, 1);
      if (ctx.getImageData(0, 0, 1, 1).data[3] === 255) {
        break;
      }
    }
    ctx.clearRect(0, 0, 1, 1);
    for (const color of layers) {
      ctx.fillStyle = color;
      ctx.fillRect(0, 0, 1, 1);
    }
    const back = Array.from(ctx.getImageData(0, 0, 1, 1).data);
    ctx.fillStyle = getComputedStyle(element).color;
    ctx.fillRect(0, 0, 1, 1);
    const fore = Array.from(ctx.getImageData(0, 0, 1, 1).data);
    const luminance = ([r, g, b]: number[]) => {
      const [R, G, B] = [r, g, b].map(v => {
        const c = v / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * R + 0.7152 * G + 0.0722 * B;
    };
    const [light, dark] = [luminance(back), luminance(fore)].sort(
      (a, b) => b - a
    );
    return (light + 0.05) / (dark + 0.05);
  });
}

/**
 * Drag the handle between the main area and the right sidebar so the sidebar is `width` px wide (galata's
 * `sidebar.setWidth`, for plain pages too).
 */
export async function setRightSidebarWidth(
  page: IJupyterLabPageFixture | Page,
  width: number
): Promise<void> {
  const handle = page
    .locator('#jp-main-split-panel > .lm-SplitPanel-handle:not(.lm-mod-hidden)')
    .last();
  const box = (await handle.boundingBox())!;
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width / 2, y);
  await page.mouse.down();
  await page.mouse.move(page.viewportSize()!.width - 33 - width, y);
  await page.mouse.up();
}

const LANGUAGE_SETTINGS =
  '/lab/api/settings/@jupyterlab/translation-extension:plugin';

/**
 * JupyterLab's language (Settings > Language), as a user sets it; null: back to English.
 */
export async function setLanguage(
  request: APIRequestContext,
  locale: string | null
): Promise<void> {
  const raw = locale ? JSON.stringify({ locale }) : '{}';
  const response = await request.put(LANGUAGE_SETTINGS, { data: { raw } });
  expect(response.ok()).toBeTruthy();
}

/** The notebook's cell sources on disk (null while a save is writing it and it cannot be read). */
export async function cellsOnDisk(
  request: APIRequestContext,
  path: string
): Promise<string[] | null> {
  const response = await request.get(
    `/api/contents/${path}?content=1&type=notebook`
  );
  if (!response.ok()) {
    return null;
  }
  const model = await response.json();
  return model.content.cells.map((cell: any) =>
    Array.isArray(cell.source) ? cell.source.join('') : cell.source
  );
}

/** The cells of the notebook in view. */
export function notebookCells(page: IJupyterLabPageFixture): Locator {
  return page.locator('.jp-NotebookPanel:visible .jp-Cell');
}

/** Open a file in JupyterLab as a user would from the file browser, with the widget factory named. */
export async function openWith(
  page: Page,
  path: string,
  factory: 'Editor' | 'Notebook'
): Promise<void> {
  await page.evaluate(
    async ([file, widget]) => {
      await (window as any).jupyterapp.commands.execute('docmanager:open', {
        path: file,
        factory: widget
      });
    },
    [path, factory]
  );
}

/** A code cell of an nbformat 4.5 notebook, not run yet. */
export function codeCell(id: string, source: string): object {
  return {
    id,
    cell_type: 'code',
    source,
    metadata: {},
    outputs: [],
    execution_count: null
  };
}

/** An nbformat 4.5 notebook for the python3 kernel, written where a test's lab reads it. */
export async function putNotebook(
  request: APIRequestContext,
  path: string,
  cells: object[]
): Promise<void> {
  const response = await request.put(`/api/contents/${path}`, {
    data: { type: 'notebook', content: pythonNotebook(cells) }
  });
  expect(response.ok()).toBeTruthy();
}

/** The content of an nbformat 4.5 notebook for the python3 kernel. */
export function pythonNotebook(cells: object[]): object {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: {
        name: 'python3',
        display_name: 'Python 3',
        language: 'python'
      }
    },
    cells
  };
}
