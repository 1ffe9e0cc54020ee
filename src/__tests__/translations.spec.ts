import { Gettext } from '@jupyterlab/translation';
import * as fs from 'fs';

const {
  catalogPath,
  compilePo,
  extractMessages,
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
  const messages: { msgid: string; msgid_plural?: string; msgctxt?: string }[] =
    extractMessages();

  it('finds the strings of the sidebar', () => {
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
});
