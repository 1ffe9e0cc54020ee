import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { insertMention, IMentionSuggestion, mentionAt } from '../mentions';
import { AgentModel } from '../model';
import {
  completeSlash,
  ISlashCommand,
  parseSlash,
  slashAt,
  slashCommands
} from '../slashCommands';
import { mcpPrompts, runSlash, SlashOutcome } from '../slashRunner';
import { IMcpPromptInfo } from '../tokens';
import { ContextReport } from './ContextReport';
import { SkillsView } from './SkillsView';
import { ContextChips } from './ContextChips';
import { ComposerToolbar, UndoButton } from './ComposerToolbar';
import { UsageMeter } from './UsageMeter';

export interface IComposerProps {
  model: AgentModel;
  trans: TranslationBundle;
  /**
   * Whether a turn is running: the stop button replaces the send button.
   */
  running: boolean;
  onStop: () => void;
}

/**
 * Where the user writes: the attached context, the message, the model and mode, send and stop.
 */
export function Composer({
  model,
  trans,
  running,
  onStop
}: IComposerProps): JSX.Element {
  const [draft, setDraft] = React.useState('');
  const [sending, setSending] = React.useState(false);
  // A message written while the agent works: shown as queued, sent when the turn ends (the server
  // takes one turn at a time), never dropped.
  const [queued, setQueued] = React.useState<string | null>(null);
  const { sendOnEnter } = model.preferences;
  const input = React.useRef<HTMLTextAreaElement>(null);
  // The `@` completion: where the mention being typed starts, what it may be, which one is picked.
  const [mention, setMention] = React.useState<{
    start: number;
    query: string;
  } | null>(null);
  const [suggestions, setSuggestions] = React.useState<IMentionSuggestion[]>(
    []
  );
  const [picked, setPicked] = React.useState(0);
  // The `/` completion: the command being typed, the MCP prompts (asked when a `/` starts the box).
  const [slash, setSlash] = React.useState<string | null>(null);
  const [prompts, setPrompts] = React.useState<IMcpPromptInfo[]>([]);
  const [report, setReport] = React.useState<SlashOutcome | null>(null);
  const slashFound: ISlashCommand[] =
    slash === null ? [] : completeSlash(slashCommands(trans, prompts), slash);
  const slashStarted = slash !== null;
  React.useEffect(() => {
    if (!slashStarted) {
      return;
    }
    let current = true;
    void mcpPrompts(model).then(found => current && setPrompts(found));
    return () => {
      current = false;
    };
  }, [slashStarted]);

  React.useEffect(() => {
    if (mention === null) {
      setSuggestions([]);
      return;
    }
    let current = true;
    // A short pause: typing "@data" asks once, not five times.
    const timer = window.setTimeout(() => {
      void model.suggestMentions(mention.query).then(found => {
        if (current) {
          setSuggestions(found);
          setPicked(0);
        }
      });
    }, 120);
    return () => {
      current = false;
      window.clearTimeout(timer);
    };
  }, [mention?.start, mention?.query]);

  const onDraftChange = (event: React.ChangeEvent<HTMLTextAreaElement>) => {
    setDraft(event.target.value);
    const typedSlash = slashAt(
      event.target.value,
      event.target.selectionStart ?? event.target.value.length
    );
    if (typedSlash !== slash) {
      setPicked(0);
    }
    setSlash(typedSlash);
    setMention(
      mentionAt(
        event.target.value,
        event.target.selectionStart ?? event.target.value.length
      )
    );
  };

  const choose = (suggestion: IMentionSuggestion) => {
    if (mention === null) {
      return;
    }
    const cursor = input.current?.selectionStart ?? draft.length;
    const next = insertMention(draft, mention.start, cursor, suggestion.label);
    setDraft(next.text);
    setMention(null);
    model.context.addMention(suggestion.mention);
    requestAnimationFrame(() =>
      input.current?.setSelectionRange(next.cursor, next.cursor)
    );
  };

  const completing = mention !== null && suggestions.length > 0;
  const completingSlash = !completing && slashFound.length > 0;

  const chooseSlash = (command: ISlashCommand) => {
    const rest = draft.slice(slash?.length ?? 0).replace(/^\s*/, '');
    const next = `${command.name} ${rest}`;
    setDraft(next);
    setSlash(null);
    requestAnimationFrame(() =>
      input.current?.setSelectionRange(next.length, next.length)
    );
  };

  const runCommand = async (text: string) => {
    setSending(true);
    setReport(null);
    const outcome = await runSlash(model, text, {
      unknownMode: mode =>
        trans.__(
          'No mode %1: use default, accept-edits, read-only or plan',
          mode
        ),
      unknownModel: name => trans.__('No model named %1', name),
      needsTask: trans.__('Say what to plan: /plan <task>'),
      nothingToCompact: trans.__('Nothing to compact yet'),
      unknownPrompt: name => trans.__('No MCP prompt %1', name)
    });
    setReport(outcome.kind === 'done' ? null : outcome);
    setSending(false);
  };

  const deliver = async (text: string) => {
    setSending(true);
    const sent = await model.send(text);
    if (!sent) {
      // Keep what the user wrote when sending failed.
      setDraft(current => (current ? `${text}\n\n${current}` : text));
    }
    setSending(false);
  };

  const send = async () => {
    const text = draft;
    if (!text.trim() || sending) {
      return;
    }
    setDraft('');
    setSlash(null);
    if (parseSlash(text)) {
      await runCommand(text);
      return;
    }
    if (running) {
      setQueued(current => (current ? `${current}\n\n${text}` : text));
      return;
    }
    await deliver(text);
  };

  const queuedRef = React.useRef(queued);
  queuedRef.current = queued;

  // Another conversation was opened: a queued message was meant for the one left, so it goes
  // back into the box rather than into the wrong chat. (Before the effect below, which would
  // otherwise send it to the newly opened conversation.)
  const sessionId = model.activeSession?.id ?? null;
  const queuedFor = React.useRef(sessionId);
  React.useEffect(() => {
    if (queuedFor.current === sessionId) {
      return;
    }
    queuedFor.current = sessionId;
    const text = queuedRef.current;
    if (text !== null) {
      queuedRef.current = null;
      setQueued(null);
      setDraft(current => (current ? `${text}\n\n${current}` : text));
    }
  }, [sessionId]);

  // The turn ended: the queued message goes now.
  React.useEffect(() => {
    const text = queuedRef.current;
    if (!running && text !== null && !sending) {
      queuedRef.current = null;
      setQueued(null);
      void deliver(text);
    }
  }, [running, queued, sending]);

  const unqueue = () => {
    const text = queued;
    setQueued(null);
    if (text !== null) {
      setDraft(current => (current ? `${text}\n\n${current}` : text));
    }
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter that confirms an IME composition (Korean, Japanese, ...) is not a send.
    if (event.nativeEvent.isComposing || event.keyCode === 229) {
      return;
    }
    if (completingSlash) {
      const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1 };
      if (event.key in moves) {
        event.preventDefault();
        setPicked(
          index =>
            (index + moves[event.key] + slashFound.length) % slashFound.length
        );
        return;
      }
      const exact = slashFound[picked]?.name === slash;
      if (event.key === 'Tab' || (event.key === 'Enter' && !exact)) {
        event.preventDefault();
        chooseSlash(slashFound[picked]);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        setSlash(null);
        return;
      }
    }
    if (completing) {
      const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: -1 };
      if (event.key in moves) {
        event.preventDefault();
        setPicked(
          index =>
            (index + moves[event.key] + suggestions.length) % suggestions.length
        );
        return;
      }
      if (event.key === 'Enter' || event.key === 'Tab') {
        event.preventDefault();
        choose(suggestions[picked]);
        return;
      }
      if (event.key === 'Escape') {
        event.preventDefault();
        setMention(null);
        return;
      }
    }
    if (event.key === 'Escape' && running) {
      event.preventDefault();
      onStop();
      return;
    }
    if (event.key !== 'Enter') {
      return;
    }
    const accel = event.ctrlKey || event.metaKey;
    if ((sendOnEnter && !event.shiftKey && !accel) || (!sendOnEnter && accel)) {
      event.preventDefault();
      void send();
    }
  };

  return (
    <div className={`jp-hdsp-Composer${running ? ' jp-mod-running' : ''}`}>
      {queued !== null && (
        <div className="jp-hdsp-Composer-queued" role="status">
          <span className="jp-hdsp-Composer-queuedLabel">
            {trans.__('Queued, sent when the agent finishes:')}
          </span>
          <span className="jp-hdsp-Composer-queuedText">{queued}</span>
          <button
            type="button"
            className="jp-mod-styled jp-mod-reject"
            title={trans.__('Take the message back into the box')}
            onClick={unqueue}
          >
            {trans.__('Edit')}
          </button>
        </div>
      )}
      <ContextChips
        context={model.context}
        instructions={model.instructions}
        trans={trans}
      />
      {report?.kind === 'skills' && (
        <SkillsView
          model={model}
          trans={trans}
          onClose={() => setReport(null)}
        />
      )}
      {report !== null && report.kind !== 'not-a-command' && (
        <ContextReport
          outcome={report}
          trans={trans}
          onClose={() => setReport(null)}
        />
      )}
      {completingSlash && (
        <ul
          className="jp-hdsp-Mentions jp-hdsp-Slash"
          role="listbox"
          id="jp-hdsp-slash"
          aria-label={trans.__('Commands')}
        >
          {slashFound.map((command, index) => (
            <li
              key={command.name}
              id={`jp-hdsp-slash-${index}`}
              role="option"
              aria-selected={index === picked}
              className={`jp-hdsp-Mentions-item${index === picked ? ' jp-mod-active' : ''}`}
              onMouseDown={event => {
                event.preventDefault(); // keep the focus in the message box
                chooseSlash(command);
              }}
            >
              <span className="jp-hdsp-Mentions-label">
                {command.name}
                {command.usage ? ` ${command.usage}` : ''}
              </span>
              <span className="jp-hdsp-Mentions-detail">
                {command.description}
              </span>
            </li>
          ))}
        </ul>
      )}
      {completing && (
        <ul
          className="jp-hdsp-Mentions"
          role="listbox"
          id="jp-hdsp-mentions"
          aria-label={trans.__('Mention')}
        >
          {suggestions.map((suggestion, index) => (
            <li
              key={`${suggestion.mention.kind}:${suggestion.label}`}
              id={`jp-hdsp-mention-${index}`}
              role="option"
              aria-selected={index === picked}
              className={`jp-hdsp-Mentions-item${index === picked ? ' jp-mod-active' : ''}`}
              onMouseDown={event => {
                event.preventDefault(); // keep the focus in the message box
                choose(suggestion);
              }}
            >
              <span className="jp-hdsp-Mentions-label">
                @{suggestion.label}
              </span>
              <span className="jp-hdsp-Mentions-detail">
                {suggestion.detail}
              </span>
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={input}
        aria-autocomplete="list"
        aria-controls={completing ? 'jp-hdsp-mentions' : undefined}
        aria-activedescendant={
          completing ? `jp-hdsp-mention-${picked}` : undefined
        }
        className="jp-hdsp-Composer-input"
        value={draft}
        rows={running ? 1 : 3}
        placeholder={
          running
            ? sendOnEnter
              ? trans.__(
                  'The agent is working: Enter queues your message, Escape stops the agent'
                )
              : trans.__(
                  'The agent is working: Ctrl+Enter queues your message, Escape stops the agent'
                )
            : sendOnEnter
              ? trans.__(
                  'Ask the agent… (Enter to send, Shift+Enter for a new line)'
                )
              : trans.__('Ask the agent… (Ctrl+Enter to send)')
        }
        aria-label={trans.__('Message')}
        onChange={onDraftChange}
        onKeyDown={onKeyDown}
      />
      <div className="jp-hdsp-Composer-footer">
        <ComposerToolbar model={model} trans={trans} />
        <UsageMeter model={model} trans={trans} />
        <div className="jp-hdsp-Composer-actions">
          <UndoButton model={model} trans={trans} />
          {running ? (
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn jp-hdsp-Composer-stop"
              title={trans.__('Stop the agent (Escape)')}
              onClick={onStop}
            >
              {trans.__('Stop')}
            </button>
          ) : (
            <button
              type="button"
              className="jp-mod-styled jp-mod-accept jp-hdsp-Composer-send"
              disabled={!draft.trim() || sending}
              onClick={() => void send()}
            >
              {trans.__('Send')}
            </button>
          )}
        </div>
      </div>
    </div>
  );
}
