import { Notification } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';
import { Widget } from '@lumino/widgets';

import { ChatSession } from './chatSession';
import { AgentModel } from './model';
import { AgentEvent } from './tokens';

/**
 * Tell the user when the agent waits for an approval while the sidebar is hidden, with a button that
 * opens it: a turn must not stall unseen.
 */
export function notifyHiddenApprovals(
  model: AgentModel,
  panel: Widget,
  reveal: () => void,
  trans: TranslationBundle
): IDisposable {
  let session: ChatSession | null = null;
  let openedAt = 0;
  // Notification id per call waiting, to take the notice back once the call is answered.
  const shown = new Map<string, string>();
  const onEvent = (_: ChatSession, event: AgentEvent) => {
    if (event.type === 'approval.resolved' || event.type === 'turn.end') {
      const answered =
        event.type === 'approval.resolved'
          ? [event.call_id]
          : [...shown.keys()];
      answered.forEach(callId => {
        Notification.dismiss(shown.get(callId));
        shown.delete(callId);
      });
      return;
    }
    // Requests replayed from the log were already shown (or answered) before.
    if (
      event.type !== 'approval.request' ||
      event.ts < openedAt ||
      panel.isVisible
    ) {
      return;
    }
    const id = Notification.warning(
      trans.__(
        'hdsp-agent waits for your approval to run %1',
        event.request.tool
      ),
      {
        autoClose: false,
        actions: [{ label: trans.__('Review'), callback: reveal }]
      }
    );
    shown.set(event.request.call_id, id);
  };
  const onActive = (_: AgentModel, active: ChatSession | null) => {
    session?.eventApplied.disconnect(onEvent);
    session = active;
    openedAt = Date.now() / 1000;
    session?.eventApplied.connect(onEvent);
  };
  model.activeSessionChanged.connect(onActive);
  onActive(model, model.activeSession);
  return new DisposableDelegate(() => {
    model.activeSessionChanged.disconnect(onActive);
    session?.eventApplied.disconnect(onEvent);
  });
}
