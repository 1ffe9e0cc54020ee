import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { ContextChips } from './ContextChips';
import { ComposerToolbar, UndoButton } from './ComposerToolbar';

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
  const { sendOnEnter } = model.preferences;

  const send = async () => {
    const text = draft;
    if (!text.trim() || sending || running) {
      return;
    }
    setSending(true);
    setDraft('');
    const sent = await model.send(text);
    if (!sent) {
      setDraft(current => current || text); // keep what the user wrote when sending failed
    }
    setSending(false);
  };

  const onKeyDown = (event: React.KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter that confirms an IME composition (Korean, Japanese, ...) is not a send.
    if (event.nativeEvent.isComposing || event.keyCode === 229) {
      return;
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
    <div className="jp-hdsp-Composer">
      <ContextChips
        context={model.context}
        instructions={model.instructions}
        trans={trans}
      />
      <textarea
        className="jp-hdsp-Composer-input"
        value={draft}
        rows={3}
        placeholder={
          sendOnEnter
            ? trans.__(
                'Ask the agent… (Enter to send, Shift+Enter for a new line)'
              )
            : trans.__('Ask the agent… (Ctrl+Enter to send)')
        }
        aria-label={trans.__('Message')}
        onChange={event => setDraft(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="jp-hdsp-Composer-footer">
        <ComposerToolbar model={model} trans={trans} />
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
