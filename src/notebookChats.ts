/**
 * Which chat belongs to which notebook. A conversation's record lists the notebooks it works on (the one in
 * view when a message was sent, every one a tool of it changed or ran: `SessionRecord.notebooks` on the
 * server). When the user brings another notebook into view, the sidebar reopens that notebook's chat, or
 * offers a new one; and a tool card says when its call acts on a document that is not the one in view.
 */
import { IToolCallState } from './chatItems';
import { contentsPath } from './documents';
import { ISessionRecord } from './tokens';

/**
 * What the sidebar offers for the notebook now in view: its own chat (`sessionId`) or a new one (null).
 */
export interface IChatOffer {
  path: string;
  sessionId: string | null;
}

/**
 * A path in one form for comparing: the contents path, without a leading "./".
 */
export function samePathForm(path: string): string {
  return contentsPath(path).replace(/^(\.\/)+/, '');
}

export function isNotebook(path: string | null): path is string {
  return path !== null && path.endsWith('.ipynb');
}

/**
 * Whether two paths name one document: equal, or one is the other under the server's root (the model may
 * write an absolute path).
 */
export function sameDocument(a: string, b: string): boolean {
  const left = samePathForm(a);
  const right = samePathForm(b);
  return (
    left === right || left.endsWith(`/${right}`) || right.endsWith(`/${left}`)
  );
}

export function tiedTo(record: ISessionRecord, path: string): boolean {
  return (record.notebooks ?? []).some(notebook =>
    sameDocument(notebook, path)
  );
}

/**
 * The conversation tied to `path` updated last, if any.
 */
export function chatFor(
  records: readonly ISessionRecord[],
  path: string
): ISessionRecord | undefined {
  return records
    .filter(record => tiedTo(record, path))
    .sort((a, b) => b.updated - a.updated)[0];
}

/**
 * What to do when `path` comes into view: nothing, reopen its chat, or offer (the user decides).
 */
export type NotebookMove =
  | { kind: 'stay' }
  | { kind: 'reopen'; sessionId: string }
  | { kind: 'offer'; offer: IChatOffer };

/**
 * The chat shown when a notebook comes into view.
 */
export interface IShownChat {
  /** Its record; null for a new chat (nothing sent yet). */
  record: ISessionRecord | null;
  /** A new chat's notebook: the one in view when it was started (null: none, it takes the next one). */
  startedFor: string | null;
  running: boolean;
}

/**
 * The notebooks in view and the sidebar's answer to each move: which chat goes with which notebook.
 *
 * A chat tied to the notebook (or kept for it by the user) stays, and so does a new chat for it. Otherwise the
 * notebook's own chat (the most recent tied to it) is reopened, unless a turn is running: a chat is never
 * switched under the user mid-turn, it is offered instead. Without one, a chat with messages offers a new chat
 * for the notebook, and a new chat goes along (it becomes the new notebook's).
 */
export class NotebookChats {
  /** The last notebook in view (a contents path); null before any. */
  get inView(): string | null {
    return this._inView;
  }

  /** A new chat's notebook (see `IShownChat.startedFor`). */
  get newChatFor(): string | null {
    return this._newChatFor;
  }

  /** The offer shown, null when none. */
  get offer(): IChatOffer | null {
    return this._offer;
  }

  /**
   * `path` (a document path, any form) is in view now; returns null when it is no notebook or no move (the
   * same notebook as before).
   */
  see(path: string | null): string | null {
    if (!isNotebook(path)) {
      return null;
    }
    const form = samePathForm(path);
    if (form === this._inView) {
      return null;
    }
    this._inView = form;
    return form;
  }

  /**
   * What to do for the notebook in view with `shown` on screen and these conversations.
   */
  decide(shown: IShownChat, records: readonly ISessionRecord[]): NotebookMove {
    const path = this._inView;
    if (path === null) {
      return { kind: 'stay' };
    }
    const { record } = shown;
    if (
      record &&
      (this._kept.has(keptKey(record.id, path)) || tiedTo(record, path))
    ) {
      return { kind: 'stay' };
    }
    if (!record && (shown.startedFor === null || shown.startedFor === path)) {
      this._newChatFor = path;
      return { kind: 'stay' };
    }
    const own = chatFor(records, path);
    if (own && !shown.running) {
      return { kind: 'reopen', sessionId: own.id };
    }
    if (!record) {
      this._newChatFor = path;
      return { kind: 'stay' };
    }
    return { kind: 'offer', offer: { path, sessionId: own?.id ?? null } };
  }

  /** Show (or take away, null) the offer. */
  setOffer(offer: IChatOffer | null): void {
    this._offer = offer;
  }

  /** The user keeps `sessionId` for the offered notebook: no more offers for the pair. */
  keep(sessionId: string): void {
    if (this._offer) {
      this._kept.add(keptKey(sessionId, this._offer.path));
    }
    this._offer = null;
  }

  /** A new chat is shown, for `path` (null: for the next notebook in view). */
  startNewChat(path: string | null): void {
    this._newChatFor = path;
    this._offer = null;
  }

  /**
   * The notebook in view was renamed (saved under a name): it stays the same notebook for its chats, which
   * learn the new path (returned: the records to patch, with their new lists).
   */
  renamed(
    from: string,
    to: string,
    records: readonly ISessionRecord[]
  ): { id: string; notebooks: string[] }[] {
    const [old, now] = [samePathForm(from), samePathForm(to)];
    if (this._inView === old) {
      this._inView = now;
    }
    if (this._newChatFor === old) {
      this._newChatFor = now;
    }
    if (this._offer?.path === old) {
      this._offer = { ...this._offer, path: now };
    }
    return records
      .filter(record => tiedTo(record, old))
      .map(record => ({
        id: record.id,
        notebooks: [...(record.notebooks ?? []), now]
      }));
  }

  private _inView: string | null = null;
  private _newChatFor: string | null = null;
  private _offer: IChatOffer | null = null;
  private _kept = new Set<string>();
}

function keptKey(sessionId: string, path: string): string {
  return `${sessionId}\n${path}`;
}

const PATH_KEYS = ['path', 'filepath', 'notebook_path'];

/**
 * The document a call changes or runs, when it is not the one in view (`inView`: a contents path, null when
 * no document is in view); null for a call that changes nothing (`changes` false), names no document, or acts
 * on the one in view. The result's path wins (the server resolved it), then the approval's target, then the
 * model's arguments.
 */
export function otherDocument(
  call: Pick<IToolCallState, 'name' | 'arguments' | 'details' | 'approval'>,
  inView: string | null,
  changes: (tool: string) => boolean
): string | null {
  if (!changes(call.name)) {
    return null;
  }
  const candidates: unknown[] = [call.details?.path];
  const request = call.approval;
  if (
    request?.action_target &&
    ['FileWrite', 'Kernel'].includes(request.action_kind ?? '')
  ) {
    candidates.push(request.action_target);
  }
  const args = call.arguments ?? request?.arguments ?? {};
  candidates.push(...PATH_KEYS.map(key => args[key]));
  const path = candidates.find(
    (value): value is string => typeof value === 'string' && value.trim() !== ''
  );
  if (!path || (inView !== null && sameDocument(path, inView))) {
    return null;
  }
  return samePathForm(path);
}
