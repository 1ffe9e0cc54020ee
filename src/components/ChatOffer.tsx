import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { baseName } from '../toolWords';

/**
 * One line when the notebook in view is not the chat's: start a chat for it (or, mid-turn, open its own
 * chat), or keep this one. Nothing is switched until the user answers; the composer keeps its text.
 */
export function ChatOffer(props: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element | null {
  const { model, trans } = props;
  const offer = model.chatOffer;
  if (!offer) {
    return null;
  }
  const name = baseName(offer.path);
  return (
    <div className="jp-hdsp-ChatOffer" role="status" data-path={offer.path}>
      <span className="jp-hdsp-ChatOffer-text" title={offer.path}>
        {trans.__('%1 is not in this chat.', name)}
      </span>
      <button
        type="button"
        className="jp-mod-styled jp-mod-accept jp-hdsp-ChatOffer-accept"
        onClick={() => model.acceptChatOffer()}
      >
        {offer.sessionId
          ? trans.__('Open its chat')
          : trans.__('Start a chat for %1', name)}
      </button>
      <button
        type="button"
        className="jp-mod-styled jp-hdsp-ChatOffer-keep"
        onClick={() => model.keepChat()}
      >
        {trans.__('Keep this chat')}
      </button>
    </div>
  );
}
