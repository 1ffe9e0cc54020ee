import { TranslationBundle } from '@jupyterlab/translation';
import {
  deleteIcon,
  downloadIcon,
  editIcon,
  LabIcon
} from '@jupyterlab/ui-components';
import * as React from 'react';

import { ISessionRecord } from '../tokens';
import { baseName } from '../toolWords';

export interface IConversationListProps {
  sessions: readonly ISessionRecord[];
  activeId: string | null;
  onSelect: (sessionId: string) => void;
  onRename: (session: ISessionRecord) => void;
  onDelete: (session: ISessionRecord) => void;
  onExport: (session: ISessionRecord) => void;
  trans: TranslationBundle;
}

/**
 * Every conversation, newest first, with the notebooks it works on: open one, rename, export as Markdown,
 * delete.
 */
export function ConversationList(props: IConversationListProps): JSX.Element {
  const { sessions, activeId, trans } = props;
  if (sessions.length === 0) {
    return (
      <div className="jp-hdsp-ConversationList-empty">
        {trans.__('No conversations yet.')}
      </div>
    );
  }
  return (
    <ul
      className="jp-hdsp-ConversationList"
      aria-label={trans.__('Conversations')}
    >
      {sessions.map(session => (
        <li
          key={session.id}
          className={`jp-hdsp-ConversationList-item${
            session.id === activeId ? ' jp-mod-active' : ''
          }`}
          data-session-id={session.id}
        >
          <button
            type="button"
            className="jp-hdsp-ConversationList-open"
            aria-current={session.id === activeId ? 'true' : undefined}
            onClick={() => props.onSelect(session.id)}
          >
            <span className="jp-hdsp-ConversationList-title">
              {session.title}
            </span>
            {(session.notebooks ?? []).length > 0 && (
              <span
                className="jp-hdsp-ConversationList-notebooks"
                title={session.notebooks!.join('\n')}
              >
                {session.notebooks!.map(baseName).join(', ')}
              </span>
            )}
            <span className="jp-hdsp-ConversationList-meta">
              {session.status === 'running'
                ? trans.__('running')
                : new Date(session.updated * 1000).toLocaleString(undefined, {
                    dateStyle: 'short',
                    timeStyle: 'short'
                  })}
            </span>
          </button>
          <IconButton
            label={trans.__('Rename "%1"', session.title)}
            icon={editIcon}
            onClick={() => props.onRename(session)}
          />
          <IconButton
            label={trans.__('Export "%1" as Markdown', session.title)}
            icon={downloadIcon}
            onClick={() => props.onExport(session)}
          />
          <IconButton
            label={trans.__('Delete "%1"', session.title)}
            icon={deleteIcon}
            onClick={() => props.onDelete(session)}
          />
        </li>
      ))}
    </ul>
  );
}

function IconButton(props: {
  label: string;
  icon: LabIcon;
  onClick: () => void;
}): JSX.Element {
  return (
    <button
      type="button"
      className="jp-hdsp-ConversationList-action"
      aria-label={props.label}
      title={props.label}
      onClick={props.onClick}
    >
      <props.icon.react tag="span" elementSize="small" />
    </button>
  );
}
