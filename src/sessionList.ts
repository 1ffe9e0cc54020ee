import { ServerConnection } from '@jupyterlab/services';

import * as api from './api';
import { ExportFormat, ISessionRecord } from './tokens';

/**
 * The conversations on the server, most recently updated first: the list behind the history view.
 * Part of the model layer; `AgentModel` owns one and reports its failures.
 */
export class SessionList {
  constructor(private readonly _serverSettings: ServerConnection.ISettings) {}

  get records(): readonly ISessionRecord[] {
    return this._records;
  }

  find(sessionId: string | null): ISessionRecord | undefined {
    return this._records.find(record => record.id === sessionId);
  }

  async refresh(): Promise<void> {
    this._set(await api.listSessions(this._serverSettings));
  }

  async create(model: string): Promise<ISessionRecord> {
    const record = await api.createSession(this._serverSettings, {
      model: model || undefined
    });
    this._set([record, ...this._records]);
    return record;
  }

  async rename(sessionId: string, title: string): Promise<void> {
    const record = await api.renameSession(
      this._serverSettings,
      sessionId,
      title
    );
    this.patch(sessionId, record);
  }

  async remove(sessionId: string): Promise<void> {
    await api.deleteSession(this._serverSettings, sessionId);
    this._records = this._records.filter(record => record.id !== sessionId);
  }

  export(sessionId: string, format: ExportFormat): Promise<string> {
    return api.exportSession(this._serverSettings, sessionId, format);
  }

  /**
   * Update one record with what its open conversation announced; returns whether it changed.
   */
  patch(sessionId: string, changes: Partial<ISessionRecord>): boolean {
    let changed = false;
    this._records = this._records.map(record => {
      if (
        record.id !== sessionId ||
        Object.entries(changes).every(
          ([key, value]) => record[key as keyof ISessionRecord] === value
        )
      ) {
        return record;
      }
      changed = true;
      return { ...record, ...changes };
    });
    return changed;
  }

  private _set(records: ISessionRecord[]): void {
    const unique = new Map(records.map(record => [record.id, record]));
    this._records = [...unique.values()].sort((a, b) => b.updated - a.updated);
  }

  private _records: ISessionRecord[] = [];
}
