import { Gettext } from '@jupyterlab/translation';
import * as fs from 'fs';

import { serverText } from '../serverText';

const {
  allMessages,
  catalogPath,
  compilePo,
  extractMessages,
  extractServerMessages,
  messageKey
} = require('../../scripts/translations.js');

const po: string = fs.readFileSync(catalogPath('ko_KR', 'po'), 'utf-8');
const json: Record<string, any> = JSON.parse(
  fs.readFileSync(catalogPath('ko_KR', 'json'), 'utf-8')
);

/**
 * The Korean bundle as JupyterLab's translation manager builds it from the server's reply.
 */
function koreanBundle(): Gettext {
  const metadata = json[''];
  const bundle = new Gettext({ domain: 'hdsp_agent', locale: 'ko_KR' });
  bundle.loadJSON(
    { ...json, '': { ...metadata, pluralForms: metadata.plural_forms } },
    'hdsp_agent'
  );
  return bundle;
}

describe('Korean translation', () => {
  // The sidebar's strings and the server's user-facing templates (hdsp_agent/user_text.py).
  const messages: { msgid: string; msgid_plural?: string; msgctxt?: string }[] =
    allMessages();

  it('finds the strings of the sidebar and of the server', () => {
    expect(extractMessages().length).toBeLessThan(messages.length);
    const server = extractServerMessages().map(
      (message: { msgid: string }) => message.msgid
    );
    expect(server).toContain('not allowed: %1');
    // Adjacent Python literals are one template, as Python joins them.
    expect(server).toContain(
      'Stopped after %1 steps (the step limit). Send a message to continue.'
    );
    const ids = messages.map(message => message.msgid);
    expect(ids).toContain('New chat');
    expect(ids).toContain('Allow once');
    expect(
      messages.find(message => message.msgid === '%1 cell')?.msgid_plural
    ).toBe('%1 cells');
  });

  it('translates every string, keeping its placeholders', () => {
    const untranslated = messages.filter(
      message => !json[messageKey(message)]?.[0]
    );
    expect(untranslated.map(message => message.msgid)).toEqual([]);
    for (const message of messages) {
      const placeholders = (text: string) => (text.match(/%\d/g) ?? []).sort();
      expect([
        message.msgid,
        placeholders(json[messageKey(message)][0])
      ]).toEqual([message.msgid, placeholders(message.msgid)]);
    }
  });

  it('ships the JSON compiled from the current .po', () => {
    const version = require('../../package.json').version;
    expect(JSON.parse(compilePo(po, 'ko_KR', version))).toEqual(json);
    expect(json['']).toMatchObject({ domain: 'hdsp_agent', language: 'ko-KR' });
  });

  it('is what a JupyterLab translation bundle answers in Korean', () => {
    const bundle = koreanBundle();
    expect(bundle.gettext('New chat')).toBe('새 대화');
    expect(bundle.gettext('Insert a cell into %1?', 'errors.ipynb')).toBe(
      'errors.ipynb에 셀을 삽입할까요?'
    );
    expect(bundle.ngettext('%1 cell', '%1 cells', 3, 3)).toBe('셀 3개');
  });

  it("shows the server's strings in Korean, parameters included, and others as they came", () => {
    const bundle = koreanBundle();
    const trans = {
      __: (msgid: string, ...args: any[]) => bundle.gettext(msgid, ...args)
    } as any;
    const reason = "runs commands with another user's privileges (sudo)";
    const message = `not allowed: ${reason}`;
    const texts = {
      [message]: { id: 'not allowed: %1', params: [reason] },
      [reason]: {
        id: "runs commands with another user's privileges (%1)",
        params: ['sudo']
      }
    };
    expect(serverText(trans, message, texts)).toBe(
      '허용되지 않음: 다른 사용자의 권한으로 명령을 실행합니다 (sudo)'
    );
    expect(serverText(trans, 'use the staging folder', texts)).toBe(
      'use the staging folder'
    );
    expect(serverText(trans, message, undefined)).toBe(message);
  });
});
