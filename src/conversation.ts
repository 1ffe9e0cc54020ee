import {
  ChatItem,
  IAssistantItem,
  IToolCallState,
  IToolItem,
  TERMINAL_STATUSES
} from './chatItems';
import { AgentEvent, IToolStatusEvent, TurnEndReason } from './tokens';
import type { IStepUsage, IVariableChangeInfo, ServerTexts } from './events';

export * from './chatItems';

/**
 * A conversation folded from its event log: what the chat shows.
 *
 * Events are applied strictly in seq order, each once: a replay's duplicates are dropped, and an
 * event that arrives ahead of a gap waits until the gap is filled (see `missingAfter`).
 * Items are replaced, never mutated, so a component can compare them by identity.
 */
export class Conversation {
  /**
   * The seq of the last event applied.
   */
  get lastSeq(): number {
    return this._lastSeq;
  }

  get items(): readonly ChatItem[] {
    return this._items;
  }

  /**
   * Whether a turn is running.
   */
  get running(): boolean {
    return this._running;
  }

  /**
   * Whether the last turn can be undone: it ended and was not undone yet (the server may still
   * refuse, e.g. when the turn changed nothing).
   */
  /**
   * What the conversation cost so far and how full the model's window was at the last step: the tokens of
   * every model call added up, the last prompt's size, the window the last turn ran with.
   */
  get usage(): Conversation.IUsage {
    return this._usage;
  }

  get canUndo(): boolean {
    return (
      !this._running &&
      this._lastTurnId !== null &&
      !this._undone.has(this._lastTurnId) &&
      !this._pruned.has(this._lastTurnId)
    );
  }

  /** Whether turn `turnId` was undone (by Undo all or "Restore to here") and not redone. */
  isUndone(turnId: string): boolean {
    return this._undone.has(turnId);
  }

  /**
   * Whether the checkpoint before turn `turnId` can be restored: the turn ended, was not undone, and its
   * checkpoint was not removed to keep the undo history under its size limit (`checkpoints.pruned`).
   */
  canRestore(turnId: string): boolean {
    return (
      !this._running &&
      this._ended.has(turnId) &&
      !this._undone.has(turnId) &&
      !this._pruned.has(turnId)
    );
  }

  /**
   * The undo notice whose undo can be redone (no turn started since), else null.
   */
  get redoKey(): string | null {
    return this._running ? null : this._redoKey;
  }

  /**
   * The kernel variables the last turn's runs created, changed or deleted, per notebook path.
   */
  get kernelChanges(): Record<string, IVariableChangeInfo[]> {
    return this._kernelChanges;
  }

  /**
   * The user has seen the kernel changes (the review's Keep all): the review bar stops listing them.
   */
  dismissKernelChanges(): void {
    this._kernelChanges = {};
  }

  /**
   * The title the server last announced (empty until a `session.updated`).
   */
  get title(): string {
    return this._title;
  }

  /**
   * The notebooks the server last announced the conversation works on (null until it announced any).
   */
  get notebooks(): readonly string[] | null {
    return this._notebooks;
  }

  /**
   * Approval requests still waiting for the user, oldest first.
   */
  get pendingApprovals(): IToolCallState[] {
    return this._items
      .filter(
        (item): item is IToolItem =>
          item.kind === 'tool' &&
          item.call.approval !== null &&
          item.call.resolution === null &&
          !TERMINAL_STATUSES.has(item.call.status)
      )
      .map(item => item.call);
  }

  /**
   * When events are waiting behind a gap, the seq after which the log must be fetched again.
   */
  get missingAfter(): number | null {
    return this._buffered.size > 0 ? this._lastSeq : null;
  }

  /**
   * Take an event in. Returns the events applied because of it, in seq order: none for an event
   * already seen or one held back behind a gap; the event and any held events it unblocked otherwise.
   */
  receive(event: AgentEvent): AgentEvent[] {
    if (event.seq <= this._lastSeq || this._buffered.has(event.seq)) {
      return [];
    }
    if (event.seq > this._lastSeq + 1) {
      this._buffered.set(event.seq, event);
      return [];
    }
    const applied = [event];
    this._apply(event);
    let next = this._buffered.get(this._lastSeq + 1);
    while (next) {
      this._buffered.delete(next.seq);
      this._apply(next);
      applied.push(next);
      next = this._buffered.get(this._lastSeq + 1);
    }
    return applied;
  }

  /**
   * Take several events in; returns the events applied, in seq order.
   */
  receiveAll(events: readonly AgentEvent[]): AgentEvent[] {
    return events.flatMap(event => this.receive(event));
  }

  private _apply(event: AgentEvent): void {
    this._lastSeq = event.seq;
    switch (event.type) {
      case 'message.user':
        this._running = true;
        this._lastTurnId = event.turn_id;
        this._kernelChanges = {};
        // A new turn ends what could be redone (the server drops it too).
        this._redoKey = null;
        this._put({
          kind: 'user',
          key: `user-${event.turn_id}`,
          turnId: event.turn_id,
          content: event.content,
          context: event.context ?? {}
        });
        break;
      case 'turn.start':
        this._running = true;
        if (event.context_window) {
          this._usage = { ...this._usage, contextWindow: event.context_window };
        }
        break;
      case 'assistant.delta':
        this._updateAssistant(event.message_id, item => ({
          ...item,
          text: event.kind === 'text' ? item.text + event.text : item.text,
          reasoning:
            event.kind === 'reasoning'
              ? item.reasoning + event.text
              : item.reasoning
        }));
        break;
      case 'assistant.message':
        if (event.usage) {
          this._addTurnUsage(event.usage);
          this._usage = {
            ...this._usage,
            tokens:
              this._usage.tokens +
              event.usage.prompt_tokens +
              event.usage.completion_tokens,
            lastPromptTokens: event.usage.prompt_tokens,
            estimated: this._usage.estimated || event.usage.estimated
          };
        }
        this._updateAssistant(event.message_id, item => ({
          ...item,
          text: event.content,
          reasoning: event.reasoning,
          complete: true
        }));
        for (const call of event.tool_calls) {
          this._updateCall(call.id, call.name, state =>
            state.rawArguments === null
              ? { ...state, rawArguments: call.arguments }
              : state
          );
        }
        break;
      case 'tool.status':
        this._updateCall(event.call_id, event.name, state =>
          applyStatus(state, event)
        );
        break;
      case 'tool.progress':
        this._updateCall(event.call_id, null, state => ({
          ...state,
          progress: { message: event.message, elapsed: event.elapsed ?? null },
          texts: mergeTexts(state.texts, event.texts)
        }));
        break;
      case 'approval.request':
        this._updateCall(event.request.call_id, event.request.tool, state => ({
          ...state,
          approval: event.request,
          arguments: state.arguments ?? event.request.arguments
        }));
        break;
      case 'approval.resolved':
        this._updateCall(event.call_id, null, state => ({
          ...state,
          resolution: {
            approved: event.approved,
            scope: event.scope,
            reason: event.reason ?? null
          },
          texts: mergeTexts(state.texts, event.texts)
        }));
        break;
      case 'error':
        this._put({
          kind: 'error',
          key: `error-${event.seq}`,
          code: event.code,
          message: event.message,
          texts: event.texts
        });
        break;
      case 'turn.end':
        this._ended.add(event.turn_id);
        this._endTurn(
          event.seq,
          event.ts,
          event.reason,
          event.message ?? null,
          event.texts
        );
        break;
      case 'context.warning':
      case 'context.compacted':
        this._put({
          kind: 'context',
          key: `context-${event.seq}`,
          level: event.type === 'context.warning' ? 'warning' : 'compacted',
          message: event.message,
          summary: event.type === 'context.compacted' ? event.summary : null,
          texts: event.texts
        });
        break;
      case 'turn.undone': {
        const turnIds = event.turn_ids?.length
          ? event.turn_ids
          : [event.turn_id];
        turnIds.forEach(turnId => this._undone.add(turnId));
        this._redoKey = `undone-${event.seq}`;
        this._put({
          kind: 'undone',
          key: this._redoKey,
          restored: event.restored,
          texts: event.texts,
          turns: turnIds.length,
          redone: false
        });
        break;
      }
      case 'checkpoints.pruned':
        event.turn_ids.forEach(turnId => this._pruned.add(turnId));
        this._put({
          kind: 'context',
          key: `pruned-${event.seq}`,
          level: 'pruned',
          message: event.message,
          summary: null,
          texts: event.texts
        });
        break;
      case 'turn.redone': {
        event.turn_ids.forEach(turnId => this._undone.delete(turnId));
        const undone = this._redoKey ? this._find(this._redoKey) : undefined;
        if (undone?.kind === 'undone') {
          this._put({ ...undone, redone: true });
        }
        this._redoKey = null;
        this._put({
          kind: 'redone',
          key: `redone-${event.seq}`,
          restored: event.restored,
          texts: event.texts
        });
        break;
      }
      case 'answer.numbers':
        this._updateAssistant(event.message_id, item => ({
          ...item,
          numbers: event.marks
        }));
        break;
      case 'kernel.changes':
        this._kernelChanges = event.notebooks;
        break;
      case 'plan.proposed':
        this._put({
          kind: 'plan',
          key: `plan-${event.path}`,
          path: event.path,
          items: event.items,
          approved: false
        });
        break;
      case 'plan.approved': {
        const card = this._find(`plan-${event.path}`);
        if (card?.kind === 'plan') {
          this._put({ ...card, approved: true });
        }
        break;
      }
      case 'session.updated':
        this._title = event.title;
        this._running = event.status === 'running';
        if (event.notebooks) {
          this._notebooks = event.notebooks;
        }
        break;
    }
  }

  private _endTurn(
    seq: number,
    ts: number,
    reason: TurnEndReason,
    message: string | null,
    texts: ServerTexts | undefined
  ): void {
    this._running = false;
    // Whatever was still streaming or waiting when the turn ended will not move anymore.
    this._items = this._items.map(item => {
      if (item.kind === 'assistant' && !item.complete) {
        return { ...item, complete: true };
      }
      if (item.kind === 'tool' && !TERMINAL_STATUSES.has(item.call.status)) {
        return {
          ...item,
          call: { ...item.call, status: 'canceled', finishedAt: ts }
        };
      }
      return item;
    });
    if (reason !== 'completed') {
      this._put({
        kind: 'turn-end',
        key: `end-${seq}`,
        reason,
        message,
        texts
      });
    }
  }

  private _updateAssistant(
    messageId: string,
    update: (item: IAssistantItem) => IAssistantItem
  ): void {
    const key = `assistant-${messageId}`;
    const current = this._find(key) as IAssistantItem | undefined;
    this._put(
      update(
        current ?? {
          kind: 'assistant',
          key,
          text: '',
          reasoning: '',
          complete: false
        }
      )
    );
  }

  private _updateCall(
    callId: string,
    name: string | null,
    update: (state: IToolCallState) => IToolCallState
  ): void {
    const key = `tool-${callId}`;
    const current = this._find(key) as IToolItem | undefined;
    const state = current?.call ?? newCall(callId, name ?? '');
    this._put({ kind: 'tool', key, call: update(state) });
  }

  private _find(key: string): ChatItem | undefined {
    const index = this._index.get(key);
    return index === undefined ? undefined : this._items[index];
  }

  private _put(item: ChatItem): void {
    const index = this._index.get(item.key);
    const items = this._items.slice();
    if (index === undefined) {
      this._index.set(item.key, items.length);
      items.push(item);
    } else {
      items[index] = item;
    }
    this._items = items;
  }

  private _lastSeq = 0;
  private _items: ChatItem[] = [];
  private _index = new Map<string, number>();
  private _buffered = new Map<number, AgentEvent>();
  private _running = false;
  private _title = '';
  private _notebooks: readonly string[] | null = null;
  private _kernelChanges: Record<string, IVariableChangeInfo[]> = {};
  private _lastTurnId: string | null = null;
  private _undone = new Set<string>();
  // Turns whose checkpoints the bound on the undo history removed (never restorable again).
  private _pruned = new Set<string>();
  private _ended = new Set<string>();
  private _redoKey: string | null = null;
  /** Each turn's tokens, added up over its steps, by part. */
  get turnUsage(): Conversation.ITurnUsage[] {
    return this._turnUsage;
  }

  private _addTurnUsage(usage: IStepUsage): void {
    const turnId = this._lastTurnId ?? '';
    const last = this._turnUsage[this._turnUsage.length - 1];
    const turn: Conversation.ITurnUsage =
      last && last.turnId === turnId
        ? last
        : {
            turnId,
            steps: 0,
            system: 0,
            tools: 0,
            history: 0,
            toolResults: 0,
            prompt: 0,
            completion: 0,
            estimated: false
          };
    const parts = usage.breakdown ?? { history: usage.prompt_tokens };
    const updated: Conversation.ITurnUsage = {
      ...turn,
      steps: turn.steps + 1,
      system: turn.system + (parts.system ?? 0),
      tools: turn.tools + (parts.tools ?? 0),
      history: turn.history + (parts.history ?? 0),
      toolResults: turn.toolResults + (parts.tool_results ?? 0),
      prompt: turn.prompt + usage.prompt_tokens,
      completion: turn.completion + usage.completion_tokens,
      estimated: turn.estimated || usage.estimated
    };
    this._turnUsage =
      turn === last
        ? [...this._turnUsage.slice(0, -1), updated]
        : [...this._turnUsage, updated];
  }

  private _turnUsage: Conversation.ITurnUsage[] = [];
  private _usage: Conversation.IUsage = {
    tokens: 0,
    lastPromptTokens: 0,
    contextWindow: null,
    estimated: false
  };
}

export namespace Conversation {
  /** One turn's tokens: the prompt by part (they add up to `prompt`) and the completion. */
  export interface ITurnUsage {
    turnId: string;
    steps: number;
    system: number;
    tools: number;
    history: number;
    toolResults: number;
    prompt: number;
    completion: number;
    estimated: boolean;
  }

  export interface IUsage {
    tokens: number;
    lastPromptTokens: number;
    contextWindow: number | null;
    estimated: boolean;
  }
}

function newCall(callId: string, name: string): IToolCallState {
  return {
    callId,
    name,
    status: 'generating',
    rawArguments: null,
    arguments: null,
    content: null,
    error: null,
    details: null,
    progress: null,
    approval: null,
    resolution: null,
    startedAt: null,
    finishedAt: null
  };
}

/**
 * The translations a call has collected from its events (none: undefined, as before any arrived).
 */
function mergeTexts(
  known: ServerTexts | undefined,
  added: ServerTexts | undefined
): ServerTexts | undefined {
  return added && Object.keys(added).length > 0
    ? { ...known, ...added }
    : known;
}

function applyStatus(
  state: IToolCallState,
  event: IToolStatusEvent
): IToolCallState {
  const terminal = TERMINAL_STATUSES.has(event.status);
  return {
    ...state,
    name: event.name || state.name,
    status: event.status,
    rawArguments: event.raw_arguments ?? state.rawArguments,
    arguments: event.arguments ?? state.arguments,
    content: event.content ?? state.content,
    error: event.error ?? state.error,
    details: event.details ?? state.details,
    startedAt:
      event.status === 'calling'
        ? (state.startedAt ?? event.ts)
        : state.startedAt,
    finishedAt: terminal ? event.ts : state.finishedAt,
    texts: mergeTexts(state.texts, event.texts)
  };
}
