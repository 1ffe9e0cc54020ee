/**
 * The browser of the `scale` bench group (bench/figures_scale.py): Debian's Chromium with JupyterLab and the
 * hdsp-agent sidebar, driven by Playwright, taking one JSON command per line on stdin and answering one JSON
 * line on stdout.
 *
 * Commands:
 *   {"op": "start", "url", "token"}            open JupyterLab, open the sidebar
 *   {"op": "open", "path"}                     open a notebook, wait until its kernel is idle
 *   {"op": "close", "path"}                    close a notebook's tab (changes discarded)
 *   {"op": "read" | "edit" | "insert" | "run", "path", ...}
 *                                              JupyterLab's own notebook model doing the operation in the page;
 *                                              answers {"seconds"} timed around page.evaluate (a round trip to
 *                                              the page, as the agent's call makes one over the bridge)
 *   {"op": "quit"}
 */
/* global window, document, process */
import { createRequire } from 'module';
import { dirname, join } from 'path';
import readline from 'readline';
import { fileURLToPath } from 'url';

// Playwright as the UI tests install it (ui-tests/node_modules).
const load = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = load(
  join(here, '..', 'ui-tests', 'node_modules', 'playwright-core')
);

const PANEL_ID = 'hdsp-agent-panel';
let browser = null;
let page = null;

// Runs in the page: the notebook panel whose document is `path` (JupyterLab's app is exposed by
// LabApp.expose_app_in_browser).
const FIND_PANEL = `
  window.__benchPanel = path => {
    for (const widget of window.jupyterapp.shell.widgets('main')) {
      if (widget.context && widget.context.path === path && widget.content && widget.content.model) {
        return widget;
      }
    }
    throw new Error('no open notebook ' + path);
  };
`;

async function start({ url, token }) {
  browser = await chromium.launch({
    executablePath: process.env.HDSP_UI_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage'
    ]
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.setDefaultTimeout(600_000);
  await page.goto(`${url}/lab?token=${token}`);
  await page.waitForFunction(
    () =>
      window.jupyterapp &&
      window.jupyterapp.shell &&
      document.querySelector('.jp-LabShell')
  );
  await page.evaluate(FIND_PANEL);
  // The sidebar, as a user has it: its panel opened from the right side bar.
  const tab = page.locator(
    `.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`
  );
  await tab.waitFor();
  const panel = page.locator(`#${PANEL_ID}`);
  for (let attempt = 0; attempt < 20 && !(await panel.isVisible()); attempt++) {
    await tab.click();
    await page.waitForTimeout(500);
  }
  if (!(await panel.isVisible())) {
    throw new Error('the hdsp-agent sidebar did not open');
  }
  return {};
}

async function open({ path: notebook }) {
  await page.evaluate(async notebook => {
    await window.jupyterapp.commands.execute('docmanager:open', {
      path: notebook
    });
  }, notebook);
  await page.waitForFunction(
    notebook => {
      try {
        const panel = window.__benchPanel(notebook);
        const kernel =
          panel.sessionContext.session && panel.sessionContext.session.kernel;
        return panel.context.isReady && kernel && kernel.status === 'idle';
      } catch {
        return false;
      }
    },
    notebook,
    { polling: 500 }
  );
  const cells = await page.evaluate(
    notebook =>
      window.__benchPanel(notebook).content.model.sharedModel.cells.length,
    notebook
  );
  return { cells };
}

async function close({ path: notebook }) {
  await page.evaluate(async notebook => {
    const panel = window.__benchPanel(notebook);
    panel.context.model.dirty = false; // closed without the "save your changes?" dialog
    panel.dispose();
  }, notebook);
  return {};
}

// The operations, as JupyterLab's notebook model does them: what a user's action or an extension calls.
const OPERATIONS = {
  // The whole notebook as JSON: what any reader of the model (a save, an export, the bridge) starts from.
  read: notebook => {
    const model = window.__benchPanel(notebook).content.model;
    return model.toJSON().cells.length;
  },
  edit: (notebook, { index, source }) => {
    const model = window.__benchPanel(notebook).content.model;
    model.sharedModel.getCell(index).setSource(source);
    return model.sharedModel.cells.length;
  },
  // At the end, as the agent's insert_cell without a position.
  insert: (notebook, { source }) => {
    const model = window.__benchPanel(notebook).content.model;
    const end = model.sharedModel.cells.length;
    model.sharedModel.insertCell(end, { cell_type: 'code', source });
    return model.sharedModel.cells.length;
  },
  // NotebookActions.run through its command, on the notebook's own kernel; resolves when the run is done.
  run: async (notebook, { index }) => {
    const app = window.jupyterapp;
    const panel = window.__benchPanel(notebook);
    app.shell.activateById(panel.id);
    panel.content.activeCellIndex = index;
    const ran = await app.commands.execute('notebook:run-cell');
    const cell = panel.content.model.sharedModel.getCell(index);
    return { ran, execution_count: cell.execution_count };
  }
};

async function operate(command) {
  const body = OPERATIONS[command.op].toString();
  const started = process.hrtime.bigint();
  const result = await page.evaluate(
    ({ body, notebook, args }) => {
      const operation = new Function(`return (${body});`)();
      return operation(notebook, args);
    },
    { body, notebook: command.path, args: command }
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, result };
}

const HANDLERS = { start, open, close };

async function handle(command) {
  if (command.op === 'quit') {
    await browser?.close();
    return { quit: true };
  }
  if (OPERATIONS[command.op]) {
    return operate(command);
  }
  return HANDLERS[command.op](command);
}

const lines = readline.createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', line => {
  queue = queue.then(async () => {
    const command = JSON.parse(line);
    let answer;
    try {
      answer = { ok: true, ...(await handle(command)) };
    } catch (error) {
      answer = {
        ok: false,
        error: String(error && error.stack ? error.stack : error)
      };
    }
    process.stdout.write(JSON.stringify(answer) + '\n');
    if (answer.quit) {
      process.exit(0);
    }
  });
});
