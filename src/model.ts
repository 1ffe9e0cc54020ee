import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  fetchHunks,
  fetchInstructions,
  fetchMentionFiles,
  fetchModels,
  listEndpointModels,
  saveModelSetup,
  testModel,
  redoUndo,
  restoreCheckpoint,
  undoCell,
  keepCell,
  undoHunk,
  undoLastTurn
} from './api';
import { hunkKey, IHunk } from './hunks';
import { ChatSession } from './chatSession';
import {
  cellSuggestions,
  fileSuggestions,
  IKernelName,
  IMentionSource,
  IMentionSuggestion,
  variableSuggestions
} from './mentions';
import { foldPlan, IPlanItem } from './plan';
import { IToolCallState } from './chatItems';
import {
  IChatOffer,
  isNotebook,
  NotebookChats,
  otherDocument,
  samePathForm,
  tiedTo
} from './notebookChats';
import { ReviewState } from './review';
import { ContextState } from './contextState';
import { SessionList } from './sessionList';
import * as errors from './handshake';
import { McpServers } from './mcpServers';
import { handshake } from './handshake';
import {
  AGENT_MODES,
  AgentMode,
  ExportFormat,
  IEndpointModels,
  IClientContext,
  IInstruction,
  IModelSetupRequest,
  IModelsOverview,
  IModelTestReply,
  IPreferences,
  IServerInfo,
  ISessionRecord,
  IToolInfo,
  DEFAULT_PREFERENCES
} from './tokens';
import { FRONTEND_VERSION } from './version';
import * as workspace from './workspace';
import { loadWorkspace } from './workspace';

/**
 * The state of the sidebar: it holds everything that talks to the server (the conversations, the
 * MCP servers), each through the functions of api.ts.
 *
 * `connect()` performs the version handshake: the frontend refuses to talk to a server of another
 * release (a stale browser bundle or a half-upgraded install) and says so instead of failing later.
 * Then it loads the models and the conversations, and reopens the last conversation.
 */
export class AgentModel implements IDisposable {
  constructor(options: AgentModel.IOptions = {}) {
    this._serverSettings =
      options.serverSettings ?? ServerConnection.makeSettings();
    this.frontendVersion = options.frontendVersion ?? FRONTEND_VERSION;
    this._retryDelays = options.retryDelays;
    this._list = new SessionList(this._serverSettings);
    this.mcp = new McpServers(this._serverSettings);
    this._store = options.store ?? null;
    this.context.changed.connect(() => {
      // Rules can depend on the document in play: ask again when it changes.
      const path = this.context.documentAttached
        ? this.context.documentPath
        : null;
      if (path !== this._instructionsFor && this._status === 'ready') {
        this._instructionsFor = path;
        void this.refreshInstructions();
      }
      if (this._chats.see(this.context.documentPath) !== null) {
        this._followNotebook();
      }
      this._stateChanged.emit();
    }, this);
  }

  /** The version of this frontend, compared with the server's. */
  readonly frontendVersion: string;

  /** What the user is looking at, attached to the next message. */
  readonly context = new ContextState();

  /** The MCP servers the agent uses and their tools (loaded when the user opens their view). */
  readonly mcp: McpServers;

  get status(): AgentModel.Status {
    return this._status;
  }

  /** The connection to the Jupyter server (for views that call a route themselves). */
  get serverSettings(): ServerConnection.ISettings {
    return this._serverSettings;
  }

  /** The server's reply; set only in the `ready` status. */
  get serverInfo(): IServerInfo | null {
    return this._serverInfo;
  }

  get tools(): IToolInfo[] {
    return this._serverInfo?.tools ?? [];
  }

  /** Why the model is in the `error` status. */
  get error(): AgentModel.ConnectionError | null {
    return this._error;
  }

  get preferences(): IPreferences {
    return this._preferences;
  }

  set preferences(preferences: IPreferences) {
    this._preferences = { ...preferences };
    this._stateChanged.emit();
  }

  /** The models the server offers (null until loaded). */
  get models(): IModelsOverview | null {
    return this._models;
  }

  /** The model picked for the next message ('' is the server's default). */
  get selectedModel(): string {
    return this._selectedModel;
  }

  set selectedModel(name: string) {
    this._choose(() => (this._selectedModel = name));
  }

  get mode(): AgentMode {
    return this._mode;
  }

  set mode(mode: AgentMode) {
    this._choose(() => (this._mode = mode));
  }

  /** Every conversation, most recently updated first. */
  get sessions(): readonly ISessionRecord[] {
    return this._list.records;
  }

  /** The conversation shown in the chat; null before the first message of a new chat. */
  get activeSession(): ChatSession | null {
    return this._active;
  }

  /**
   * What the sidebar offers for the notebook in view when the chat shown is not tied to it: a new chat, or
   * (mid-turn) the notebook's own chat; null when nothing is offered.
   */
  get chatOffer(): IChatOffer | null {
    return this._chats.offer;
  }

  /**
   * Take the offer: the notebook's own chat, or a new chat for it in the default mode (not the mode of the
   * chat left). The composer keeps what the user was writing.
   */
  acceptChatOffer(): void {
    const offer = this._chats.offer;
    if (!offer) {
      return;
    }
    if (offer.sessionId) {
      this.selectSession(offer.sessionId);
      return;
    }
    this._mode = 'default';
    this.newChat();
    this._chats.startNewChat(offer.path);
  }

  /** Keep the chat shown for the notebook in view: it is not offered again for that notebook. */
  keepChat(): void {
    if (this._active) {
      this._chats.keep(this._active.id);
    } else {
      this._chats.setOffer(null);
    }
    this._stateChanged.emit();
  }

  /**
   * The notebook in view was saved under another name: its chats go on with it (the server learns the new
   * name with the next message sent from it).
   */
  notebookRenamed(from: string, to: string): void {
    for (const { id, notebooks } of this._chats.renamed(
      from,
      to,
      this._list.records
    )) {
      this._list.patch(id, { notebooks });
    }
    this._stateChanged.emit();
  }

  /**
   * The document a tool call changes or runs when it is not the one in view (what its card says); null when
   * it is, or the call changes nothing.
   */
  elsewhere(
    call: Pick<IToolCallState, 'name' | 'arguments' | 'details' | 'approval'>
  ): string | null {
    const inView = this.context.documentPath;
    return otherDocument(
      call,
      inView === null ? null : samePathForm(inView),
      name => this.tools.some(tool => tool.name === name && !tool.read_only)
    );
  }

  /** The last failure of a user action (send, rename, ...), shown until the next action. */
  get actionError(): string | null {
    return this._actionError;
  }

  /** Emitted whenever anything above changes. */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  /** Emitted when another conversation becomes the active one. */
  get activeSessionChanged(): ISignal<this, ChatSession | null> {
    return this._activeSessionChanged;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Ask the server who it is, check that it is the same release, then load models and conversations.
   *
   * Never throws: a failure puts the model in the `error` status.
   */
  async connect(): Promise<void> {
    const attempt = ++this._attempt;
    this._setState('connecting', null, null);

    const outcome = await handshake(this._serverSettings, this.frontendVersion);
    if (attempt !== this._attempt) {
      return; // a newer connect() superseded this one
    }
    if ('error' in outcome) {
      this._setState('error', null, outcome.error);
      return;
    }
    this._setState('ready', outcome.serverInfo, null);
    // Warm the server's project listing for `@` now: the user's first `@` is then answered from it (a
    // ranking of the kept listing, tens of ms on 20,000 files) instead of waiting on the walk.
    void fetchMentionFiles(this._serverSettings, '').catch(() => undefined);
    await this._loadWorkspace(attempt);
  }

  /** The cells the last turn changed in open notebooks, until the user keeps or undoes them. */
  readonly review = new ReviewState();

  /** The active notebook's cells and kernel, for `@` mentions (set by the app's notebook tracker). */
  mentionSource: IMentionSource | null = null;

  /**
   * What `@query` may mention: cells of the active notebook, variables of its kernel, project files. A source
   * that fails (no kernel, server busy) contributes nothing rather than failing the others.
   */
  async suggestMentions(query: string): Promise<IMentionSuggestion[]> {
    const source = this.mentionSource;
    const [files, variables] = await Promise.all([
      fetchMentionFiles(this._serverSettings, query).catch(
        () => [] as string[]
      ),
      source
        ? source.variables().catch(() => [] as IKernelName[])
        : Promise.resolve([] as IKernelName[])
    ]);
    return [
      ...variableSuggestions(variables, query),
      ...cellSuggestions(source?.cells() ?? [], query),
      ...fileSuggestions(files)
    ];
  }

  /** The agent's latest plan in the open conversation (its `todo` tool), [] when it has none. */
  get plan(): readonly IPlanItem[] {
    return this._plan;
  }

  /**
   * Keep the agent's change to one cell: its mark goes, the change stays, and the server records it so no
   * undo takes it back and a reloaded page shows it kept.
   */
  async keepCell(path: string, cellId: string): Promise<void> {
    const active = this._active;
    this.review.remove(path, cellId);
    if (active) {
      await keepCell(this._serverSettings, active.id, path, cellId);
    }
  }

  /** Keep every marked cell change (the review bar's Keep all). */
  async keepAllCells(): Promise<void> {
    const marks = [...this.review.marks];
    await Promise.all(marks.map(mark => this.keepCell(mark.path, mark.cellId)));
  }

  /**
   * Undo the last turn's change to one cell; the turn's other changes stay. Rejects with the server's reason
   * (e.g. the user edited the cell since: it is left as it is).
   */
  async undoCell(path: string, cellId: string): Promise<void> {
    const active = this._active;
    if (!active) {
      return;
    }
    await undoCell(this._serverSettings, active.id, path, cellId);
    this.review.remove(path, cellId);
  }

  /**
   * The last turn's change to a file the user has not kept yet, hunk by hunk, as the file is on disk now.
   * A file with none left (all kept or undone, or changed back) loses its review mark.
   */
  async fileHunks(path: string): Promise<IHunk[]> {
    const active = this._active;
    if (!active || !this.review.findFile(path)) {
      return [];
    }
    const hunks = this.review.reviewable(
      path,
      await fetchHunks(this._serverSettings, active.id, path)
    );
    if (hunks.length === 0 && this._active === active) {
      this.review.removeFile(path);
    }
    return hunks;
  }

  /** Keep one hunk of the agent's change to a file: its mark goes, the change stays. */
  keepHunk(path: string, hunk: IHunk): void {
    this.review.keepHunk(path, hunkKey(hunk));
  }

  /**
   * Undo one hunk of the last turn's change to a file, on disk; the rest stays. Rejects with the server's
   * reason (e.g. the user edited its lines since: the file is left as it is).
   */
  async undoHunk(path: string, hunk: IHunk): Promise<void> {
    const active = this._active;
    if (!active) {
      return;
    }
    await undoHunk(this._serverSettings, active.id, path, hunk);
  }

  /** The project instructions and rules that apply to the next message (shown as chips). */
  get instructions(): readonly IInstruction[] {
    return this._instructions;
  }

  /** Ask the server which instructions apply for the document in the context now. */
  async refreshInstructions(): Promise<void> {
    const path = this.context.documentAttached
      ? this.context.documentPath
      : null;
    let instructions: IInstruction[];
    try {
      instructions = await fetchInstructions(this._serverSettings, path);
    } catch {
      instructions = []; // chips are information only: a failure must not block the chat
    }
    // The watch asks every few seconds: only a change re-renders.
    if (JSON.stringify(instructions) !== JSON.stringify(this._instructions)) {
      this._instructions = instructions;
      this._stateChanged.emit();
    }
  }

  /**
   * Keep the rule chips current while Lab runs: a rule file added, changed or removed (from the file
   * browser, an editor, a terminal or git) gets or loses its chip within `intervalMs`, without a reload.
   * The server reads a handful of known places per ask (`instruction_places.py`), so asking is cheap.
   */
  watchInstructions(intervalMs: number): void {
    window.clearInterval(this._instructionsWatch);
    this._instructionsWatch = window.setInterval(() => {
      if (this._status === 'ready' && !document.hidden) {
        void this.refreshInstructions();
      }
    }, intervalMs);
  }

  /** True while the model setup is shown over the chat ("Manage models…"). */
  get setupOpen(): boolean {
    return this._setupOpen;
  }

  openSetup(): void {
    this._setupOpen = true;
    this._stateChanged.emit();
  }

  closeSetup(): void {
    this._setupOpen = false;
    this._stateChanged.emit();
  }

  /**
   * Save the user's model on the server: it answers the next message, no restart. Rejects with the server's
   * reason (e.g. the administrator locked models).
   */
  async saveModelSetup(request: IModelSetupRequest): Promise<void> {
    this._models = await saveModelSetup(this._serverSettings, request);
    this._selectedModel = '';
    this._setupOpen = false;
    this._stateChanged.emit();
  }

  /** The models an endpoint lists, for the setup's model picker. */
  listEndpointModels(
    baseUrl: string,
    apiKey?: string
  ): Promise<IEndpointModels> {
    return listEndpointModels(this._serverSettings, baseUrl, apiKey);
  }

  /** One tiny request to a model, for the setup's "Test" button. */
  testModel(request: IModelSetupRequest): Promise<IModelTestReply> {
    return testModel(this._serverSettings, request);
  }

  /** Reload the model list (after the administrator configured one). */
  async refreshModels(): Promise<void> {
    await this._guard(async () => {
      this._models = await fetchModels(this._serverSettings);
    });
  }

  async refreshSessions(): Promise<void> {
    await this._guard(() => this._list.refresh());
  }

  /** Show a conversation (replayed from the server's log). */
  selectSession(sessionId: string | null): void {
    this._selections++;
    if (this._active?.id === sessionId) {
      return;
    }
    this._active?.dispose();
    this._active = null;
    this.review.clear();
    this._plan = [];
    const inView = this.context.documentPath;
    this._chats.startNewChat(isNotebook(inView) ? samePathForm(inView) : null);
    const record = this._list.find(sessionId);
    if (record) {
      this._active = new ChatSession({
        serverSettings: this._serverSettings,
        record,
        retryDelays: this._retryDelays
      });
      this._active.changed.connect(this._onSessionChanged, this);
      this._active.eventApplied.connect((_, event) => {
        this.review.apply(event);
        const plan = foldPlan(this._plan, event);
        if (plan !== this._plan) {
          this._plan = plan;
          this._stateChanged.emit();
        }
      });
      this._active.open();
    }
    this._persist();
    this._activeSessionChanged.emit(this._active);
    this._stateChanged.emit();
  }

  /** Start a new chat: the conversation is created on the server when the first message is sent. */
  newChat(): void {
    this._actionError = null;
    this.selectSession(null);
  }

  /**
   * Send a message in the active conversation (creating it first for a new chat) with the
   * context the user left attached, the mode and the picked model.
   */
  async send(content: string): Promise<boolean> {
    const text = content.trim();
    if (!text) {
      return false;
    }
    return this._guard(async () => {
      if (!this._active) {
        const record = await this._list.create(this._selectedModel);
        this.selectSession(record.id);
      }
      this.context.refresh();
      this._chats.setOffer(null); // a message sent from here keeps this chat for the notebook in view
      const context = { ...this.context.attached(), mode: this._mode };
      await this._active!.send(text, context, this._selectedModel || undefined);
      this.context.reset();
    });
  }

  /**
   * "Approve plan": switch to `mode` and run the plan file (the server reads it as it is now, so an
   * edited plan is what runs).
   */
  async runPlan(
    path: string,
    mode: 'accept-edits' | 'default'
  ): Promise<boolean> {
    const active = this._active;
    if (!active) {
      return false;
    }
    this.mode = mode;
    return this._guard(async () => {
      this.context.refresh();
      await active.runPlan(
        path,
        mode,
        this.requestContext(),
        this._selectedModel || undefined
      );
    });
  }

  /**
   * The active conversation, created on the server first for a new chat (`/context`, `/compact`).
   */
  async ensureSession(): Promise<ChatSession> {
    if (!this._active) {
      const record = await this._list.create(this._selectedModel);
      this.selectSession(record.id);
    }
    return this._active!;
  }

  /** What a message sends as its context: the attached context and the mode. */
  requestContext(): IClientContext {
    return { ...this.context.attached(), mode: this._mode };
  }

  /** Report a failure of a user action the way the model's own actions do (`actionError`). */
  reportError(reason: unknown): void {
    this._actionError = errors.describeFailure(reason);
    this._stateChanged.emit();
  }

  /**
   * Restore the files and cells the last turn of the open conversation changed; the conversation
   * then shows what was restored. Returns whether the server did it.
   */
  async undoLastTurn(): Promise<boolean> {
    const active = this._active;
    if (!active) {
      return false;
    }
    return this._guard(async () => {
      await undoLastTurn(this._serverSettings, active.id, this._unsaved());
    });
  }

  /**
   * The review bar's "Undo all": every change still marked for review, from every turn that has one (a
   * turn's marks stay after the next message), not only the last turn's. The oldest such turn is restored
   * to (a kept change stays: restore skips it); with no marked cell, the last turn (its files) is undone.
   */
  async undoAll(): Promise<boolean> {
    const oldest = this.review.marks[0]?.turnId;
    return oldest ? this.restoreCheckpoint(oldest) : this.undoLastTurn();
  }

  /**
   * Go back to the checkpoint before a turn of the open conversation: that turn and every later one are
   * undone, all or nothing (a conflict becomes `actionError`, naming each cell and file). Returns whether
   * the server did it.
   */
  async restoreCheckpoint(turnId: string): Promise<boolean> {
    const active = this._active;
    if (!active) {
      return false;
    }
    return this._guard(async () => {
      await restoreCheckpoint(
        this._serverSettings,
        active.id,
        turnId,
        this._unsaved()
      );
    });
  }

  /** Re-do the last undo or restore of the open conversation, all or nothing. */
  async redo(): Promise<boolean> {
    const active = this._active;
    if (!active) {
      return false;
    }
    return this._guard(async () => {
      await redoUndo(this._serverSettings, active.id, this._unsaved());
    });
  }

  /**
   * The contents paths open here with unsaved changes (set by the app from its open documents): an undo
   * must not write those files on disk, or the editor's next save would bring the agent's change back.
   */
  unsavedPaths: (() => string[]) | null = null;

  private _unsaved(): string[] {
    try {
      return this.unsavedPaths?.() ?? [];
    } catch {
      return [];
    }
  }

  async renameSession(sessionId: string, title: string): Promise<void> {
    await this._guard(() => this._list.rename(sessionId, title));
  }

  async deleteSession(sessionId: string): Promise<void> {
    await this._guard(async () => {
      await this._list.remove(sessionId);
      if (this._active?.id === sessionId) {
        this.selectSession(null);
      }
    });
  }

  /** The conversation as a document (Markdown by default); null when the export failed. */
  async exportSession(
    sessionId: string,
    format: ExportFormat = 'markdown'
  ): Promise<string | null> {
    let text: string | null = null;
    await this._guard(async () => {
      text = await this._list.export(sessionId, format);
    });
    return text;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    window.clearInterval(this._instructionsWatch);
    this._active?.dispose();
    this._active = null;
    this.context.dispose();
    Signal.clearData(this);
  }

  private async _loadWorkspace(attempt: number): Promise<void> {
    // The user may pick a conversation, a model or a mode before the saved workspace loads
    // (JupyterLab's state database waits for the workspace): their choice wins.
    const selection = this._selections;
    const choices = this._choices;
    const [saved] = await Promise.all([
      loadWorkspace(this._store),
      this.refreshModels(),
      this.refreshSessions(),
      this.refreshInstructions()
    ]);
    if (attempt !== this._attempt || this._isDisposed) {
      return;
    }
    if (saved && choices === this._choices) {
      this._selectedModel = saved.model ?? '';
      this._mode = AGENT_MODES.includes(saved.mode!) ? saved.mode! : 'default';
    }
    const names = (this._models?.models ?? []).map(model => model.name);
    if (this._selectedModel && !names.includes(this._selectedModel)) {
      this._selectedModel = '';
    }
    if (selection === this._selections) {
      const restored = this._list.find(saved?.activeSessionId ?? null);
      this.selectSession((restored ?? this._list.records[0])?.id ?? null);
    }
    this._loaded = true;
    this._followNotebook(); // the notebook in view may have its own chat
    this._stateChanged.emit();
  }

  private _onSessionChanged(session: ChatSession): void {
    // Keep the list's title, status and notebooks in step with what the open conversation announces.
    const { title, running, notebooks } = session.conversation;
    const known = this._list.find(session.id)?.notebooks ?? [];
    const more = (notebooks ?? []).filter(path => !known.includes(path));
    this._list.patch(session.id, {
      ...(title ? { title } : {}),
      ...(more.length > 0 ? { notebooks: [...known, ...more] } : {}),
      status: running ? 'running' : 'idle'
    });
    const offer = this._chats.offer;
    const record = this._list.find(session.id);
    if (offer && record && tiedTo(record, offer.path)) {
      this._chats.setOffer(null); // a message or a tool of this chat tied it to the offered notebook
    }
    this._stateChanged.emit();
  }

  /**
   * The notebook in view changed (or the conversations loaded): reopen its chat, offer one, or stay.
   */
  private _followNotebook(): void {
    if (!this._loaded || this._isDisposed) {
      return;
    }
    const active = this._active;
    const move = this._chats.decide(
      {
        record: active ? (this._list.find(active.id) ?? null) : null,
        startedFor: this._chats.newChatFor,
        running: active?.conversation.running ?? false
      },
      this._list.records
    );
    if (move.kind === 'reopen') {
      this.selectSession(move.sessionId);
      return;
    }
    this._chats.setOffer(move.kind === 'offer' ? move.offer : null);
  }

  /** Run a user action; a failure becomes `actionError` instead of an exception. */
  private async _guard(action: () => Promise<void>): Promise<boolean> {
    this._actionError = null;
    try {
      await action();
      return true;
    } catch (reason) {
      this._actionError = errors.describeFailure(reason);
      return false;
    } finally {
      if (!this._isDisposed) {
        this._stateChanged.emit();
      }
    }
  }

  private _choose(apply: () => void): void {
    this._choices++;
    apply();
    this._persist();
    this._stateChanged.emit();
  }

  private _persist(): void {
    void this._store?.save({
      activeSessionId: this._active?.id ?? null,
      model: this._selectedModel,
      mode: this._mode
    });
  }

  private _setState(
    status: AgentModel.Status,
    serverInfo: IServerInfo | null,
    error: AgentModel.ConnectionError | null
  ): void {
    this._status = status;
    this._serverInfo = serverInfo;
    this._error = error;
    this._stateChanged.emit();
  }

  private _serverSettings: ServerConnection.ISettings;
  private _retryDelays: number[] | undefined;
  private _store: AgentModel.IWorkspaceStore | null;
  private _status: AgentModel.Status = 'connecting';
  private _serverInfo: IServerInfo | null = null;
  private _error: AgentModel.ConnectionError | null = null;
  private _preferences: IPreferences = { ...AgentModel.defaultPreferences };
  private _models: IModelsOverview | null = null;
  private _setupOpen = false;
  private _plan: IPlanItem[] = [];
  private _instructions: IInstruction[] = [];
  private _instructionsWatch: number | undefined = undefined;
  private _instructionsFor: string | null | undefined = undefined;
  private _selectedModel = '';
  private _mode: AgentMode = 'default';
  private _list: SessionList;
  private _chats = new NotebookChats();
  private _loaded = false;
  private _active: ChatSession | null = null;
  private _actionError: string | null = null;
  private _attempt = 0;
  private _selections = 0;
  private _choices = 0;
  private _isDisposed = false;
  private _stateChanged = new Signal<this, void>(this);
  private _activeSessionChanged = new Signal<this, ChatSession | null>(this);
}

export namespace AgentModel {
  export interface IOptions {
    /** Defaults to `ServerConnection.makeSettings()`. */
    serverSettings?: ServerConnection.ISettings;
    /** Defaults to the version in package.json; tests set it. */
    frontendVersion?: string;
    /** Where the open conversation, model and mode are kept across reloads. */
    store?: IWorkspaceStore;
    /** Socket reconnection delays in milliseconds (tests shorten them). */
    retryDelays?: number[];
  }

  export type IWorkspaceStore = workspace.IWorkspaceStore;

  export type Status = 'connecting' | 'ready' | 'error';

  export type IVersionMismatch = errors.IVersionMismatch;
  export type IUnreachable = errors.IUnreachable;
  export type ConnectionError = errors.ConnectionError;

  export const defaultPreferences: IPreferences = DEFAULT_PREFERENCES;
}
