import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { IToolCallState } from '../conversation';
import { IToolDetails, IToolImage, ToolStatus } from '../tokens';
import { baseName, toolHeadline } from '../toolWords';
import { DiffView } from './DiffView';
import { isReplayReport, ReplayReport } from './ReplayReport';
import { useElapsed } from './hooks';
import { serverText } from '../serverText';

export interface IToolCardProps {
  call: IToolCallState;
  trans: TranslationBundle;
  /**
   * Open the arguments and the result from the start (the `showToolDetails` preference).
   */
  showDetails: boolean;
  /**
   * For links out of the card (a replay finding shows its cell in the notebook).
   */
  commands?: CommandRegistry;
  /**
   * The document the call changes or runs when it is not the one in view (null: it is, or none).
   */
  elsewhere?: string | null;
}

/**
 * While these show, the agent itself is busy (not waiting for the user): a spinner.
 */
const BUSY: ReadonlySet<ToolStatus> = new Set([
  'generating',
  'generated',
  'calling'
]);

/**
 * How a call ended or stands, as the user should read it: a cell that raised is not "done".
 */
export type ToolOutcome =
  | 'preparing'
  | 'waiting'
  | 'running'
  | 'ok'
  | 'error'
  | 'interrupted'
  | 'timed-out'
  | 'still-running'
  | 'not-run'
  | 'denied'
  | 'stopped';

/**
 * One tool call inline in the chat: name, status, time, and its arguments, result, diff, images
 * and error.
 */
export function ToolCard({
  call,
  trans,
  showDetails,
  commands,
  elsewhere = null
}: IToolCardProps): JSX.Element {
  const [open, setOpen] = React.useState(showDetails);
  const bodyId = `jp-hdsp-ToolCard-${call.callId}`;
  const diff =
    typeof call.details?.diff === 'string' ? call.details.diff : null;
  const images = toolImages(call.details);
  const replay = isReplayReport(call.details?.replay)
    ? call.details.replay
    : null;
  const headline = toolHeadline(call.name, call.arguments, trans);
  const target = cellTarget(call, trans) ?? summarize(call, headline !== null);
  const code = shownCode(call);
  const outcome = toolOutcome(call);

  return (
    <div
      className={`jp-hdsp-ToolCard jp-mod-${call.status} jp-mod-outcome-${outcome}`}
      data-call-id={call.callId}
      data-status={call.status}
      data-outcome={outcome}
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
        {headline ? (
          <span className="jp-hdsp-ToolCard-headline" title={call.name}>
            {headline}
          </span>
        ) : (
          <code className="jp-hdsp-ToolCard-name">{call.name}</code>
        )}
        {target && <span className="jp-hdsp-ToolCard-target">{target}</span>}
        {elsewhere && (
          <span
            className="jp-hdsp-ToolCard-elsewhere"
            title={trans.__('%1 is not the document in view', elsewhere)}
          >
            {trans.__('in %1', baseName(elsewhere))}
          </span>
        )}
        <span className="jp-hdsp-ToolCard-status">
          {outcomeLabel(call, outcome, trans)}
        </span>
        <Elapsed call={call} trans={trans} />
      </button>
      {call.status === 'calling' && call.progress && (
        <div className="jp-hdsp-ToolCard-progress">
          {serverText(trans, call.progress.message, call.texts)}
        </div>
      )}
      {call.status === 'denied' && (
        <div className="jp-hdsp-ToolCard-denied" role="note">
          {denialText(call, trans)}
        </div>
      )}
      {call.error && call.status !== 'denied' && (
        <div className="jp-hdsp-ToolCard-error" role="note">
          {serverText(trans, call.error.message, call.texts)}
          {call.error.suggestion && (
            <div className="jp-hdsp-ToolCard-suggestion">
              {serverText(trans, call.error.suggestion, call.texts)}
            </div>
          )}
        </div>
      )}
      {diff && <DiffView diff={diff} label={trans.__('Changes')} />}
      {replay && (
        <ReplayReport report={replay} trans={trans} commands={commands} />
      )}
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
          {code && <pre className="jp-hdsp-ToolCard-code">{code}</pre>}
          {/* The tool's name, its error code, the raw arguments (with their nulls) and the text the model
              read are for the curious: behind "Details", open from the start with the showToolDetails
              preference. */}
          <details className="jp-hdsp-ToolCard-details" open={showDetails}>
            <summary>{trans.__('Details')}</summary>
            <div className="jp-hdsp-ToolCard-section">
              {trans.__('Tool')} <code>{call.name}</code>
              {call.error && (
                <span className="jp-hdsp-ToolCard-errorCode">
                  {' · '}
                  {trans.__('error code %1', call.error.code)}
                </span>
              )}
            </div>
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
          </details>
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

/**
 * The outcome of a call from its status and what its result carries: run_cell and execute_code
 * answer `done` with `details.status` "error" (the cell raised: "KeyboardInterrupt" when it was
 * interrupted), "aborted" (not run after an earlier error), "running"/"queued" (still going in the
 * kernel when the tool stopped waiting); a tool over its time limit fails with E_TOOL_TIMEOUT.
 */
export function toolOutcome(
  call: Pick<IToolCallState, 'status' | 'details' | 'content' | 'error'>
): ToolOutcome {
  switch (call.status) {
    case 'generating':
    case 'generated':
      return 'preparing';
    case 'awaiting_approval':
      return 'waiting';
    case 'calling':
      return 'running';
    case 'denied':
      return 'denied';
    case 'canceled':
      return 'stopped';
    case 'errored':
      return call.error?.code === 'E_TOOL_TIMEOUT' ? 'timed-out' : 'error';
    case 'done':
      break;
  }
  const kernelStatus = call.details?.status;
  if (kernelStatus === 'error') {
    const ename = call.details?.ename;
    return ename === 'KeyboardInterrupt' ||
      /^KeyboardInterrupt\b/m.test(call.content ?? '')
      ? 'interrupted'
      : 'error';
  }
  if (kernelStatus === 'aborted') {
    return 'not-run';
  }
  if (kernelStatus === 'running' || kernelStatus === 'queued') {
    return 'still-running';
  }
  return 'ok';
}

/**
 * The words of the card's status.
 */
export function outcomeLabel(
  call: Pick<IToolCallState, 'status' | 'details'>,
  outcome: ToolOutcome,
  trans: TranslationBundle
): string {
  switch (outcome) {
    case 'waiting':
      return trans.__('Waiting for you');
    case 'error':
      return call.status === 'done'
        ? trans.__('Raised an error')
        : trans.__('Failed');
    case 'interrupted':
      return trans.__('Interrupted');
    case 'timed-out':
      return trans.__('Timed out');
    case 'still-running':
      return call.details?.status === 'queued'
        ? trans.__('Waiting for the kernel')
        : trans.__('Still running in the kernel');
    case 'not-run':
      return trans.__('Not run (an earlier cell failed)');
    case 'stopped':
      return trans.__('Stopped');
    default:
      return statusLabel(call.status, trans);
  }
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
      return trans.__('Waiting for you');
    case 'calling':
      return trans.__('Running…');
    case 'done':
      return trans.__('Done');
    case 'errored':
      return trans.__('Failed');
    case 'denied':
      return trans.__('Denied');
    case 'canceled':
      return trans.__('Stopped');
  }
}

function denialText(call: IToolCallState, trans: TranslationBundle): string {
  const reason = call.resolution?.reason;
  if (reason) {
    return trans.__('Denied: %1', serverText(trans, reason, call.texts));
  }
  if (call.resolution && !call.resolution.approved) {
    return trans.__('Denied by you.');
  }
  return call.error
    ? serverText(trans, call.error.message, call.texts)
    : trans.__('Denied.');
}

const PATH_KEYS = ['filepath', 'path', 'dirPath', 'directory_path'];

/**
 * The one argument that says what the call is about (a path, a command, a URL, ...); without the
 * path when the headline already names the file.
 */
export function summarize(
  call: Pick<IToolCallState, 'arguments'>,
  headlineNamesFile = false
): string {
  const args = call.arguments ?? {};
  for (const key of [
    ...(headlineNamesFile ? [] : PATH_KEYS),
    'command',
    'url',
    'query',
    'pattern',
    'code',
    // Never 'cell_id': an id is for the model (the user knows cells by number and content).
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

/**
 * The cell a cell tool changed, as the user counts it ("cell 4 (df.head())", from the result's `index` and
 * `first_line`): never its id. Null for other calls, and before the result.
 */
export function cellTarget(
  call: Pick<IToolCallState, 'details'>,
  trans: TranslationBundle
): string | null {
  const index = call.details?.index;
  const line = call.details?.first_line;
  if (typeof index !== 'number' || typeof line !== 'string') {
    return null;
  }
  return line
    ? trans.__('cell %1 (%2)', index + 1, line)
    : trans.__('cell %1', index + 1);
}

/**
 * The code or text a call runs or writes (its `code`, `source` or `command`), shown as it is in the opened
 * card; the rest of the arguments stay behind "Details".
 */
function shownCode(call: Pick<IToolCallState, 'arguments'>): string {
  for (const key of ['code', 'source', 'command', 'new_string']) {
    const value = call.arguments?.[key];
    if (typeof value === 'string' && value.trim()) {
      return value;
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
