import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IToolCallState } from '../conversation';
import { IToolDetails, IToolImage, ToolStatus } from '../tokens';
import { DiffView } from './DiffView';
import { useElapsed } from './hooks';

export interface IToolCardProps {
  call: IToolCallState;
  trans: TranslationBundle;
  /**
   * Open the arguments and the result from the start (the `showToolDetails` preference).
   */
  showDetails: boolean;
}

const BUSY: ReadonlySet<ToolStatus> = new Set([
  'generating',
  'generated',
  'awaiting_approval',
  'calling'
]);

/**
 * One tool call inline in the chat: name, status, time, and its arguments, result, diff, images
 * and error.
 */
export function ToolCard({
  call,
  trans,
  showDetails
}: IToolCardProps): JSX.Element {
  const [open, setOpen] = React.useState(showDetails);
  const bodyId = `jp-hdsp-ToolCard-${call.callId}`;
  const diff =
    typeof call.details?.diff === 'string' ? call.details.diff : null;
  const images = toolImages(call.details);
  const target = summarize(call);

  return (
    <div
      className={`jp-hdsp-ToolCard jp-mod-${call.status}`}
      data-call-id={call.callId}
      data-status={call.status}
    >
      <button
        type="button"
        className="jp-hdsp-ToolCard-header"
        aria-expanded={open}
        aria-controls={bodyId}
        onClick={() => setOpen(!open)}
      >
        <span className="jp-hdsp-ToolCard-caret" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        {BUSY.has(call.status) && (
          <span className="jp-hdsp-Spinner" aria-hidden="true" />
        )}
        <code className="jp-hdsp-ToolCard-name">{call.name}</code>
        {target && <span className="jp-hdsp-ToolCard-target">{target}</span>}
        <span className="jp-hdsp-ToolCard-status">
          {statusLabel(call.status, trans)}
        </span>
        <Elapsed call={call} trans={trans} />
      </button>
      {call.status === 'calling' && call.progress && (
        <div className="jp-hdsp-ToolCard-progress">{call.progress.message}</div>
      )}
      {call.status === 'denied' && (
        <div className="jp-hdsp-ToolCard-denied" role="note">
          {denialText(call, trans)}
        </div>
      )}
      {call.error && call.status !== 'denied' && (
        <div className="jp-hdsp-ToolCard-error" role="note">
          <strong>{call.error.code}</strong> {call.error.message}
          {call.error.suggestion && (
            <div className="jp-hdsp-ToolCard-suggestion">
              {call.error.suggestion}
            </div>
          )}
        </div>
      )}
      {diff && <DiffView diff={diff} label={trans.__('Changes')} />}
      {images.map((image, index) => (
        <img
          key={index}
          className="jp-hdsp-ToolCard-image"
          alt={trans.__('Output image %1 of %2', index + 1, call.name)}
          src={`data:${image.mime_type};base64,${image.data}`}
        />
      ))}
      {open && (
        <div id={bodyId} className="jp-hdsp-ToolCard-body">
          <div className="jp-hdsp-ToolCard-section">
            {trans.__('Arguments')}
          </div>
          <pre className="jp-hdsp-ToolCard-pre">{formatArguments(call)}</pre>
          {call.content !== null && call.content !== '' && (
            <>
              <div className="jp-hdsp-ToolCard-section">
                {trans.__('Result')}
              </div>
              <pre className="jp-hdsp-ToolCard-pre">{call.content}</pre>
            </>
          )}
        </div>
      )}
    </div>
  );
}

function Elapsed({
  call,
  trans
}: {
  call: IToolCallState;
  trans: TranslationBundle;
}): JSX.Element | null {
  const running = call.status === 'calling';
  const live = useElapsed(call.startedAt, running);
  let seconds: number | null = null;
  if (running) {
    seconds = call.progress?.elapsed ?? live;
  } else if (call.startedAt !== null && call.finishedAt !== null) {
    seconds = Math.max(0, call.finishedAt - call.startedAt);
  }
  if (seconds === null) {
    return null;
  }
  return (
    <span className="jp-hdsp-ToolCard-elapsed">
      {seconds < 10
        ? trans.__('%1 s', seconds.toFixed(1))
        : trans.__('%1 s', Math.round(seconds))}
    </span>
  );
}

export function statusLabel(
  status: ToolStatus,
  trans: TranslationBundle
): string {
  switch (status) {
    case 'generating':
      return trans.__('Preparing…');
    case 'generated':
      return trans.__('Ready');
    case 'awaiting_approval':
      return trans.__('Waiting for approval');
    case 'calling':
      return trans.__('Running…');
    case 'done':
      return trans.__('Done');
    case 'errored':
      return trans.__('Failed');
    case 'denied':
      return trans.__('Denied');
    case 'canceled':
      return trans.__('Canceled');
  }
}

function denialText(call: IToolCallState, trans: TranslationBundle): string {
  const reason = call.resolution?.reason;
  if (reason) {
    return trans.__('Denied: %1', reason);
  }
  if (call.resolution && !call.resolution.approved) {
    return trans.__('Denied by you.');
  }
  return call.error?.message ?? trans.__('Denied.');
}

/**
 * The one argument that says what the call is about (a path, a command, a URL, ...).
 */
export function summarize(call: Pick<IToolCallState, 'arguments'>): string {
  const args = call.arguments ?? {};
  for (const key of [
    'filepath',
    'path',
    'dirPath',
    'directory_path',
    'command',
    'url',
    'query',
    'pattern',
    'code',
    'cell_id',
    'name'
  ]) {
    const value = args[key];
    if (typeof value === 'string' && value.trim()) {
      const line = value.trim().split('\n')[0];
      return line.length > 60 ? `${line.slice(0, 57)}…` : line;
    }
  }
  return '';
}

function formatArguments(call: IToolCallState): string {
  if (call.arguments) {
    return JSON.stringify(call.arguments, null, 2);
  }
  if (call.rawArguments) {
    try {
      return JSON.stringify(JSON.parse(call.rawArguments), null, 2);
    } catch {
      return call.rawArguments;
    }
  }
  return '';
}

/**
 * The images a tool result carries, as the server sends them: `details.images` (cell outputs, MCP
 * results: `{mime_type, data}`) and `details.image` (read_file of a picture: `{mime_type, base64}`).
 */
function toolImages(details: IToolDetails | null | undefined): IToolImage[] {
  const candidates: Partial<IToolImage & { base64: string }>[] = [
    ...(details?.images ?? []),
    ...(details?.image ? [details.image] : [])
  ];
  return candidates
    .map(image => ({
      mime_type: String(image.mime_type ?? ''),
      data: String(image.data ?? image.base64 ?? '')
    }))
    .filter(image => image.mime_type.startsWith('image/') && image.data);
}
