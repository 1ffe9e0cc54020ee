/**
 * Strings the server wrote for the user, shown in the user's language.
 *
 * The server writes English (the model and the logs read it) and, beside the strings a user sees, a
 * `texts` map: English text → the catalog template it was made from and its parameters
 * (`hdsp_agent/user_text.py`). The template is a msgid of the sidebar's own catalog
 * (`scripts/translations.js` extracts them from `hdsp_agent/`), so `trans.__` translates it like any
 * sidebar string. A string the map does not name (a reason the user typed, a library's message) is
 * shown as it came.
 */
import type { TranslationBundle } from '@jupyterlab/translation';
import type { ServerTexts } from './events';

// A parameter may itself be a translatable string (a reason inside "not allowed: %1"); never deeper
// than this, whatever the server sends.
const MAX_DEPTH = 4;

/**
 * `text` in the user's language when `texts` says how to translate it, else `text` unchanged.
 */
export function serverText(
  trans: TranslationBundle,
  text: string,
  texts: ServerTexts | null | undefined,
  depth = 0
): string {
  const ref =
    texts && Object.prototype.hasOwnProperty.call(texts, text)
      ? texts[text]
      : undefined;
  if (!ref || typeof ref.id !== 'string' || depth > MAX_DEPTH) {
    return text;
  }
  const params = (ref.params ?? []).map(param =>
    param !== text ? serverText(trans, param, texts, depth + 1) : param
  );
  // The msgid comes from the server on purpose: its templates are in the catalog (extracted from
  // hdsp_agent/ by scripts/translations.js, checked by tests/test_user_text.py).
  // eslint-disable-next-line jupyter/no-dynamic-translation
  return trans.__(ref.id, ...params);
}
