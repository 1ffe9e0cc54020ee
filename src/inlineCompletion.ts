/**
 * Inline completion: ghost text in notebook cells and file editors, through JupyterLab's own inline completer
 * (a provider registered with `ICompletionProviderManager.registerInlineProvider`). JupyterLab debounces
 * (the provider's `debouncerDelay` in Settings → Inline Completer), shows the ghost text and owns the keys
 * (Tab accepts, Alt+] / Alt+[ cycle, Escape dismisses); this provider builds the request and aborts the one
 * before it when the user types on (the server then drops the model's request, `web/completion.py`).
 *
 * The user's on/off and per-language choice: `schema/inline-completion.json`.
 */
import type {
  CompletionHandler,
  IInlineCompletionContext,
  IInlineCompletionList,
  IInlineCompletionProvider
} from '@jupyterlab/completer';
import type { ServerConnection } from '@jupyterlab/services';
import type { Kernel } from '@jupyterlab/services';
import type { Widget } from '@lumino/widgets';

import { fetchInlineCompletion } from './api';
import { kernelNamespace } from './documents';
import { hdspAgentIcon } from './icons';
import type { IInlineCompletionRequest } from './tokens';

export const INLINE_PROVIDER_ID = 'hdsp-agent';
export const INLINE_PLUGIN_ID = 'hdsp-agent:inline-completion';

// What one request carries from the browser (the server cuts it down further).
const CELLS_ABOVE = 20;
const CELL_CHARS = 2000;
// The kernel's names are read at most this often: reading them runs a (silent) execute on the kernel.
const NAMES_MAX_AGE_MS = 10_000;

/** schema/inline-completion.json. */
export interface IInlineCompletionPreferences {
  enabled: boolean;
  /** Language → on/off; a language not named is on. */
  languages: Record<string, boolean>;
}

export const DEFAULT_INLINE_PREFERENCES: IInlineCompletionPreferences = {
  enabled: true,
  languages: { markdown: false, text: false }
};

// Editor MIME types → the language words the settings and the server use.
const MIME_LANGUAGES: Record<string, string> = {
  'text/x-ipython': 'python',
  'text/x-python': 'python',
  'text/x-rsrc': 'r',
  'text/x-julia': 'julia',
  'text/x-sql': 'sql',
  'text/x-sh': 'shell',
  'text/javascript': 'javascript',
  'application/javascript': 'javascript',
  'text/typescript': 'typescript',
  'application/typescript': 'typescript',
  'text/x-ipythongfm': 'markdown',
  'text/x-markdown': 'markdown',
  'text/markdown': 'markdown',
  'text/plain': 'text',
  'application/json': 'json',
  'text/x-yaml': 'yaml'
};

/** The language word for an editor's MIME type (`text/x-ipython` → `python`). */
export function languageOf(mimeType: string | undefined): string {
  if (!mimeType) {
    return 'text';
  }
  return (
    MIME_LANGUAGES[mimeType] ??
    mimeType.replace(/^(text|application)\/(x-)?/, '').toLowerCase()
  );
}

/** Whether the user wants completions in this language. */
export function wanted(
  preferences: IInlineCompletionPreferences,
  language: string
): boolean {
  return preferences.enabled && preferences.languages[language] !== false;
}

/** The part of a notebook around the cursor the server needs: the cells above, nearest last, bounded. */
export function cellsAbove(sources: string[], activeIndex: number): string[] {
  return sources
    .slice(Math.max(0, activeIndex - CELLS_ABOVE), Math.max(0, activeIndex))
    .map(source => source.slice(-CELL_CHARS));
}

// The widgets the provider reads, by shape (no import of notebook or fileeditor at activation).
interface INotebookLike {
  content: {
    activeCellIndex: number;
    widgets: readonly { model: { sharedModel: { getSource(): string } } }[];
  };
}
interface IDocumentLike {
  context?: { path?: string };
  sessionContext?: {
    session?: { kernel?: Kernel.IKernelConnection | null } | null;
  };
}

function documentPath(widget: Widget): string {
  return (widget as unknown as IDocumentLike).context?.path ?? '';
}

function notebookCellsAbove(widget: Widget): string[] {
  const content = (widget as unknown as Partial<INotebookLike>).content;
  if (!content || !Array.isArray(content.widgets)) {
    return [];
  }
  const sources = content.widgets.map(cell =>
    cell.model.sharedModel.getSource()
  );
  return cellsAbove(sources, content.activeCellIndex);
}

/** The request for `POST complete`. */
export function completionRequest(
  request: CompletionHandler.IRequest,
  widget: Widget,
  variables: string[]
): IInlineCompletionRequest {
  return {
    prefix: request.text.slice(0, request.offset),
    suffix: request.text.slice(request.offset),
    language: languageOf(request.mimeType),
    path: documentPath(widget),
    cells_above: notebookCellsAbove(widget),
    variables
  };
}

/**
 * The provider. One request at a time: a new `fetch` aborts the previous one, whose answer nobody will see.
 */
export class HdspInlineProvider implements IInlineCompletionProvider {
  readonly identifier = INLINE_PROVIDER_ID;
  readonly name = 'hdsp-agent';
  readonly icon = hdspAgentIcon;
  // JupyterLab's inline completer reads these defaults: wait for a pause in typing, and give a model time.
  readonly schema = {
    default: { debouncerDelay: 350, timeout: 15000 }
  };

  constructor(options: HdspInlineProvider.IOptions) {
    this._serverSettings = options.serverSettings;
    this._preferences = options.preferences;
  }

  /** How many requests reached the server, and how many were aborted (for the bench and the tests). */
  readonly counts = { sent: 0, aborted: 0 };

  async fetch(
    request: CompletionHandler.IRequest,
    context: IInlineCompletionContext
  ): Promise<IInlineCompletionList> {
    this._pending?.abort();
    this._pending = undefined;
    const language = languageOf(request.mimeType);
    if (!wanted(this._preferences(), language) || !request.text.trim()) {
      return { items: [] };
    }
    const controller = new AbortController();
    this._pending = controller;
    const variables = await this._variables(context);
    if (controller.signal.aborted) {
      return { items: [] };
    }
    this.counts.sent += 1;
    try {
      const reply = await fetchInlineCompletion(
        this._serverSettings,
        completionRequest(request, context.widget, variables),
        controller.signal
      );
      return { items: reply.text ? [{ insertText: reply.text }] : [] };
    } catch (error) {
      if (controller.signal.aborted) {
        this.counts.aborted += 1;
      } else {
        console.warn('hdsp-agent: inline completion failed', error);
      }
      return { items: [] };
    } finally {
      if (this._pending === controller) {
        this._pending = undefined;
      }
    }
  }

  /** The kernel's names, read when the kept ones are older than NAMES_MAX_AGE_MS and the kernel is idle. */
  private async _variables(
    context: IInlineCompletionContext
  ): Promise<string[]> {
    const kernel =
      context.session?.kernel ??
      (context.widget as unknown as IDocumentLike).sessionContext?.session
        ?.kernel;
    if (!kernel) {
      return [];
    }
    const kept = this._names.get(kernel.id);
    const fresh = kept && Date.now() - kept.at < NAMES_MAX_AGE_MS;
    if (fresh || kernel.status !== 'idle') {
      return kept?.names ?? [];
    }
    try {
      const names = (await kernelNamespace(kernel)).map(entry => entry.name);
      this._names.set(kernel.id, { names, at: Date.now() });
      return names;
    } catch {
      return kept?.names ?? [];
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _preferences: () => IInlineCompletionPreferences;
  private _pending: AbortController | undefined;
  private _names = new Map<string, { names: string[]; at: number }>();
}

export namespace HdspInlineProvider {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    preferences: () => IInlineCompletionPreferences;
  }
}
