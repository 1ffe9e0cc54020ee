import {
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { ITranslator, nullTranslator } from '@jupyterlab/translation';

// The sidebar tab and its handshake must exist as soon as JupyterLab starts: no lazy import.
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { ChatPanel } from './components/ChatPanel';
import { hdspAgentIcon } from './icons';
// eslint-disable-next-line jupyter/prefer-lazy-imports
import { AgentModel } from './model';
import {
  CommandIDs,
  IPreferences,
  PANEL_ID,
  PLUGIN_ID,
  TRANSLATION_DOMAIN
} from './tokens';

/**
 * The hdsp-agent sidebar: a panel in the right area, a command to open it, and its preferences.
 */
const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description: 'An AI agent in the JupyterLab sidebar.',
  autoStart: true,
  optional: [ICommandPalette, ILayoutRestorer, ISettingRegistry, ITranslator],
  activate: (
    app: JupyterFrontEnd,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null,
    translator: ITranslator | null
  ): void => {
    const trans = (translator ?? nullTranslator).load(TRANSLATION_DOMAIN);
    const model = new AgentModel({
      serverSettings: app.serviceManager.serverSettings
    });

    const panel = new ChatPanel({ model, trans });
    panel.id = PANEL_ID;
    panel.title.icon = hdspAgentIcon;
    panel.title.caption = trans.__('hdsp-agent');
    app.shell.add(panel, 'right', { rank: 1000 });
    restorer?.add(panel, PANEL_ID);

    app.commands.addCommand(CommandIDs.open, {
      label: trans.__('Open hdsp-agent'),
      caption: trans.__('Show the hdsp-agent sidebar'),
      icon: args => (args.isPalette ? undefined : hdspAgentIcon),
      describedBy: { args: { type: 'object', properties: {} } },
      execute: () => {
        app.shell.activateById(PANEL_ID);
      }
    });
    palette?.addItem({
      command: CommandIDs.open,
      category: trans.__('hdsp-agent')
    });

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
  }
};

export default plugin;
