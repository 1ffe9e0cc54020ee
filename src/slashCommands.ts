/**
 * The composer's slash commands: which there are (the built-in ones and each MCP server's prompts as
 * `/mcp:<server>:<prompt>`), the completion of the one being typed, and reading a command line. What each
 * does is `AgentModel.runSlash`.
 */
import { TranslationBundle } from '@jupyterlab/translation';

import { IMcpPromptInfo } from './tokens';

export interface ISlashCommand {
  /** What is inserted, e.g. `/mode` or `/mcp:demo:review`. */
  name: string;
  /** Its arguments, e.g. `<mode>`. */
  usage: string;
  description: string;
}

export const BUILTIN_COMMANDS = [
  '/new',
  '/compact',
  '/context',
  '/plan',
  '/undo',
  '/model',
  '/mode',
  '/skills'
] as const;

export function slashCommands(
  trans: TranslationBundle,
  prompts: readonly IMcpPromptInfo[] = []
): ISlashCommand[] {
  const builtin: ISlashCommand[] = [
    { name: '/new', usage: '', description: trans.__('Start a new chat') },
    {
      name: '/compact',
      usage: '',
      description: trans.__('Summarize the conversation now to free context')
    },
    {
      name: '/context',
      usage: '',
      description: trans.__(
        'What the next request holds: system, rules, tools, history'
      )
    },
    {
      name: '/plan',
      usage: trans.__('<task>'),
      description: trans.__(
        'Plan a task read-only; nothing changes until you approve'
      )
    },
    { name: '/undo', usage: '', description: trans.__('Undo the last turn') },
    {
      name: '/model',
      usage: trans.__('<name>'),
      description: trans.__('Use another model')
    },
    {
      name: '/mode',
      usage: 'default | accept-edits | read-only | plan',
      description: trans.__('Switch the mode')
    },
    {
      name: '/skills',
      usage: '',
      description: trans.__(
        'The skills the agent may use, and those waiting for your trust'
      )
    }
  ];
  const fromMcp = prompts.map(prompt => ({
    name: `/mcp:${prompt.server}:${prompt.name}`,
    usage: prompt.arguments
      .map(arg => (arg.required ? `<${arg.name}>` : `[${arg.name}]`))
      .join(' '),
    description:
      prompt.description || trans.__('MCP prompt of %1', prompt.server)
  }));
  return [...builtin, ...fromMcp];
}

/**
 * The command being typed: the text starts with `/` and the cursor is still in its first word.
 */
export function slashAt(text: string, cursor: number): string | null {
  if (!text.startsWith('/')) {
    return null;
  }
  const word = text.slice(0, cursor);
  return /^\/\S*$/.test(word) ? word : null;
}

export function completeSlash(
  commands: readonly ISlashCommand[],
  typed: string
): ISlashCommand[] {
  const query = typed.toLowerCase();
  return commands.filter(command => command.name.startsWith(query));
}

/**
 * A command line read: `/name rest…`, or null when the text is not a known command (a message that
 * starts with a path such as `/data/x.csv` is sent as it is).
 */
export function parseSlash(
  text: string
): { name: string; rest: string } | null {
  const match = /^(\/[^\s]+)\s*([\s\S]*)$/.exec(text.trim());
  if (!match) {
    return null;
  }
  const name = match[1];
  const known =
    (BUILTIN_COMMANDS as readonly string[]).includes(name) ||
    name.startsWith('/mcp:');
  return known ? { name, rest: match[2].trim() } : null;
}

/**
 * An MCP prompt's arguments from what follows the command: `name=value` pairs, else words in the
 * order the prompt declares its arguments (the last one takes the rest of the line).
 */
export function promptArguments(
  prompt: IMcpPromptInfo,
  rest: string
): Record<string, string> {
  const args: Record<string, string> = {};
  if (!rest) {
    return args;
  }
  const pairs = [...rest.matchAll(/(\w+)=("([^"]*)"|\S+)/g)];
  if (pairs.length > 0) {
    pairs.forEach(pair => (args[pair[1]] = pair[3] ?? pair[2]));
    return args;
  }
  const words = rest.split(/\s+/);
  prompt.arguments.forEach((arg, index) => {
    const last = index === prompt.arguments.length - 1;
    const value = last ? words.slice(index).join(' ') : words[index];
    if (value) {
      args[arg.name] = value;
    }
  });
  return args;
}
