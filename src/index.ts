import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { ICompletionProviderManager } from '@jupyterlab/completer';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { IStateDB } from '@jupyterlab/statedb';
import {
  ITranslator,
  nullTranslator,
  TranslationBundle
} from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

// The sidebar tab and its handshake must exist as soon as JupyterLab starts: no lazy import.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { ChatPanel } from './components/ChatPanel';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import {
  insertCode,
  notebookMentionSource,
  reloadChangedDocuments,
  trackContext
} from './documents';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { notifyHiddenApprovals } from './approvalNotice';
// The cell actions and review marks attach to notebooks as they open: needed at activation.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addCellActions } from './cellActions';
// The replay button goes on each notebook's toolbar as it opens: needed at activation.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { addTrustActions } from './trust';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { showReviewMarks } from './reviewMarks';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { showFileReviewMarks } from './fileReviewMarks';
import { hdspAgentIcon } from './icons';
import {
  DEFAULT_INLINE_PREFERENCES,
  HdspInlineProvider,
  IInlineCompletionPreferences,
  INLINE_PLUGIN_ID
} from './inlineCompletion';
// The bridge connects at activation: the agent may change an open notebook at any time.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { notebookBridgeUrl } from './api';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { NotebookBridge } from './notebookBridge';
import { stateDBWorkspaceStore, tabWorkspaceStore } from './workspace';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { AgentModel } from './model';
import {
  CommandIDs,
  IPreferences,
  PANEL_ID,
  PLUGIN_ID,
  TRANSLATION_DOMAIN
} from './tokens';

// How soon a rule file added while Lab runs (.cursorrules, AGENTS.md, …) gets its chip.
const INSTRUCTIONS_WATCH_MS = 3000;
const WORKSPACE_KEY = `${PLUGIN_ID}:workspace`;

/**
 * The hdsp-agent sidebar: the chat panel in the right area, its commands, and its preferences.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'An AI agent in the JupyterLab sidebar.',
  autoStart: true,
  requires: [IRenderMimeRegistry],
  optional: [
    ICommandPalette,
    ILayoutRestorer,
    ISettingRegistry,
    ITranslator,
    INotebookTracker,
    ILabShell,
    IDocumentManager,
    IStateDB
  ],
  activate: (
    app: JupyterFrontEnd,
    rendermime: IRenderMimeRegistry,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null,
    notebooks: INotebookTracker | null,
    labShell: ILabShell | null,
    documents: IDocumentManager | null,
    stateDB: IStateDB | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const model = new AgentModel({
      serverSettings: app.serviceManager.serverSettings,
      store: tabWorkspaceStore(
        stateDB ? stateDBWorkspaceStore(stateDB, WORKSPACE_KEY) : null,
        window.sessionStorage,
        `${WORKSPACE_KEY}:${app.serviceManager.serverSettings.baseUrl}`
      )
    });
    trackContext(model, { shell: labShell, notebooks, documents });
    model.watchInstructions(INSTRUCTIONS_WATCH_MS);
    if (notebooks) {
      model.mentionSource = notebookMentionSource(notebooks);
    }
    if (documents) {
      reloadChangedDocuments(model, documents, labShell);
      showFileReviewMarks(model, documents, labShell, trans);
    }

    const panel = new ChatPanel({
      model,
      commands: app.commands,
      rendermime,
      trans
    });
    panel.id = PANEL_ID;
    panel.title.icon = hdspAgentIcon;
    panel.title.caption = trans.__('hdsp-agent');
    app.shell.add(panel, 'right', { rank: 1000 });
    restorer?.add(panel, PANEL_ID);
    notifyHiddenApprovals(
      model,
      panel,
      () => app.shell.activateById(PANEL_ID),
      trans
    );

    const focusInput = () => {
      panel.node
        .querySelector<HTMLTextAreaElement>('.jp-hdsp-Composer-input')
        ?.focus();
    };
    const noArgs = { args: { type: 'object', properties: {} } };
    const codeArgs = {
      args: {
        type: 'object',
        properties: { code: { type: 'string', description: 'The code' } },
        required: ['code']
      }
    };

    app.commands.addCommand(CommandIDs.open, {
      label: trans.__('Open hdsp-agent'),
      caption: trans.__('Show the hdsp-agent sidebar'),
      icon: args => (args.isPalette ? undefined : hdspAgentIcon),
      describedBy: noArgs,
      execute: () => {
        app.shell.activateById(PANEL_ID);
        requestAnimationFrame(focusInput);
      }
    });
    app.commands.addCommand(CommandIDs.newChat, {
      label: trans.__('New hdsp-agent chat'),
      describedBy: noArgs,
      execute: () => {
        model.newChat();
        app.shell.activateById(PANEL_ID);
        requestAnimationFrame(focusInput);
      }
    });
    app.commands.addCommand(CommandIDs.stop, {
      label: trans.__('Stop the hdsp-agent'),
      describedBy: noArgs,
      isEnabled: () => !!model.activeSession?.conversation.running,
      execute: () => model.activeSession?.cancel()
    });
    const codeCommand = (run: boolean) => ({
      label: run
        ? trans.__('Run code in the active notebook')
        : trans.__('Insert code in the active notebook'),
      describedBy: codeArgs,
      execute: async (args: ReadonlyPartialJSONObject) => {
        const panel = notebooks
          ? await insertCode(notebooks, String(args.code ?? ''), run)
          : null;
        if (!panel) {
          notifyNoNotebook(trans);
        }
      }
    });
    app.commands.addCommand(CommandIDs.insertCode, codeCommand(false));
    app.commands.addCommand(CommandIDs.runCode, codeCommand(true));
    if (notebooks) {
      addCellActions(app, model, notebooks, trans);
      addTrustActions(app, model, notebooks, trans);
      showReviewMarks(model, notebooks, trans);
    }
    for (const command of [
      CommandIDs.open,
      CommandIDs.newChat,
      CommandIDs.stop,
      ...(notebooks
        ? [
            CommandIDs.fixError,
            CommandIDs.explainCell,
            CommandIDs.editCell,
            CommandIDs.checkReproducibility
          ]
        : [])
    ]) {
      palette?.addItem({ command, category: trans.__('hdsp-agent') });
    }

    if (settingRegistry) {
      settingRegistry
        .load(PLUGIN_ID)
        .then(settings => {
          const apply = () => {
            model.preferences = {
              ...AgentModel.defaultPreferences,
              ...(settings.composite as Partial<IPreferences>)
            };
          };
          apply();
          settings.changed.connect(apply);
        })
        .catch(reason => {
          console.error('hdsp-agent: failed to load settings.', reason);
        });
    }

    void model.connect();

    if (notebooks) {
      // The agent's notebook tools change the notebooks open here, live, instead of their files.
      const bridge = new NotebookBridge({
        tracker: notebooks,
        url: notebookBridgeUrl(app.serviceManager.serverSettings),
        WebSocket: app.serviceManager.serverSettings.WebSocket,
        documents,
        shell: labShell
      });
      bridge.open();
    }
  }
};

function notifyNoNotebook(trans: TranslationBundle): void {
  Notification.warning(
    trans.__('Open a notebook first: the code goes below its active cell.'),
    {
      autoClose: 4000
    }
  );
}

/**
 * Inline completion in cells and file editors: a provider for JupyterLab's inline completer, with the
 * user's on/off and languages from schema/inline-completion.json (src/inlineCompletion.ts).
 */
const inlineCompletionPlugin: JupyterFrontEndPlugin<void> = {
  id: INLINE_PLUGIN_ID,
  description: 'Inline completion from the hdsp-agent model.',
  autoStart: true,
  requires: [ICompletionProviderManager],
  optional: [ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    completions: ICompletionProviderManager,
    settings: ISettingRegistry | null
  ) => {
    let preferences: IInlineCompletionPreferences = {
      ...DEFAULT_INLINE_PREFERENCES
    };
    // Registered now, before the app is restored: JupyterLab builds its providers' settings then.
    completions.registerInlineProvider(
      new HdspInlineProvider({
        serverSettings: app.serviceManager.serverSettings,
        preferences: () => preferences
      })
    );
    settings
      ?.load(INLINE_PLUGIN_ID)
      .then(loaded => {
        const read = () => {
          preferences = {
            ...DEFAULT_INLINE_PREFERENCES,
            ...(loaded.composite as Partial<IInlineCompletionPreferences>)
          };
        };
        read();
        loaded.changed.connect(read);
      })
      .catch(reason =>
        console.error(
          'hdsp-agent: failed to load inline completion settings.',
          reason
        )
      );
  }
};

export default [plugin, inlineCompletionPlugin];
