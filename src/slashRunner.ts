/**
 * What each slash command does (`slashCommands.ts` lists and reads them). Commands that have a button
 * use the model's own actions; `/context`, `/compact` and MCP prompts call their routes (api.ts).
 */
import {
  compactSession,
  fetchContextBreakdown,
  fetchMcpPrompts,
  getMcpPrompt
} from './api';
import type { AgentModel } from './model';
import { parseSlash, promptArguments } from './slashCommands';
import {
  AGENT_MODES,
  AgentMode,
  IContextReply,
  IMcpPromptInfo
} from './tokens';

/** What the composer shows after a command: nothing, the `/context` breakdown, the skills, or a short note. */
export type SlashOutcome =
  | { kind: 'done' }
  | { kind: 'context'; reply: IContextReply }
  | { kind: 'skills' }
  | { kind: 'note'; message: string }
  | { kind: 'not-a-command' };

const MODE_ALIASES: Record<string, AgentMode> = { ask: 'default' };

export async function mcpPrompts(model: AgentModel): Promise<IMcpPromptInfo[]> {
  try {
    return (await fetchMcpPrompts(model.serverSettings)).prompts;
  } catch {
    return []; // no MCP prompts is not worth an error while typing
  }
}

/**
 * Run `line` as a command. `note(english)` words a note the composer shows (already translated by the
 * caller's bundle).
 */
export async function runSlash(
  model: AgentModel,
  line: string,
  words: {
    unknownMode: (mode: string) => string;
    unknownModel: (name: string) => string;
    needsTask: string;
    nothingToCompact: string;
    unknownPrompt: (name: string) => string;
  }
): Promise<SlashOutcome> {
  const command = parseSlash(line);
  if (!command) {
    return { kind: 'not-a-command' };
  }
  const { name, rest } = command;
  try {
    switch (name) {
      case '/new':
        model.newChat();
        return { kind: 'done' };
      case '/undo':
        await model.undoLastTurn();
        return { kind: 'done' };
      case '/mode': {
        const mode = MODE_ALIASES[rest] ?? (rest as AgentMode);
        if (!AGENT_MODES.includes(mode)) {
          return { kind: 'note', message: words.unknownMode(rest) };
        }
        model.mode = mode;
        return { kind: 'done' };
      }
      case '/model': {
        const names = (model.models?.models ?? []).map(info => info.name);
        if (!names.includes(rest)) {
          return { kind: 'note', message: words.unknownModel(rest) };
        }
        model.selectedModel = rest;
        return { kind: 'done' };
      }
      case '/plan':
        if (!rest) {
          return { kind: 'note', message: words.needsTask };
        }
        model.mode = 'plan';
        await model.send(rest);
        return { kind: 'done' };
      case '/skills':
        return { kind: 'skills' };
      case '/context': {
        const session = await model.ensureSession();
        model.context.refresh();
        const reply = await fetchContextBreakdown(
          model.serverSettings,
          session.id,
          model.requestContext(),
          model.selectedModel || undefined
        );
        return { kind: 'context', reply };
      }
      case '/compact': {
        const session = await model.ensureSession();
        const reply = await compactSession(
          model.serverSettings,
          session.id,
          model.requestContext(),
          model.selectedModel || undefined
        );
        // The summary is shown in the chat (a `context.compacted` event).
        return reply.compacted
          ? { kind: 'done' }
          : { kind: 'note', message: words.nothingToCompact };
      }
      default: {
        const [, server, promptName] = name.split(':');
        const prompt = (await mcpPrompts(model)).find(
          found => found.server === server && found.name === promptName
        );
        if (!prompt) {
          return { kind: 'note', message: words.unknownPrompt(name) };
        }
        const text = await getMcpPrompt(
          model.serverSettings,
          server,
          promptName,
          promptArguments(prompt, rest)
        );
        await model.send(text);
        return { kind: 'done' };
      }
    }
  } catch (reason) {
    model.reportError(reason);
    return { kind: 'done' };
  }
}
