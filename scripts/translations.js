#!/usr/bin/env node
/**
 * The sidebar's own translations, shipped inside the Python package the way JupyterLab loads an
 * extension's locale: hdsp_agent/locale/<lang>/LC_MESSAGES/hdsp_agent.{po,json}, found through the
 * `jupyterlab.locale` entry point (see jupyterlab_server's translation_utils).
 *
 *   node scripts/translations.js update   extract every trans.__/_n/_p string of src/, and every
 *                                         user_text("...")/user_template("...") template of hdsp_agent/
 *                                         (the server's strings for the user: hdsp_agent/user_text.py),
 *                                         into each .po
 *                                         (new strings get an empty translation, gone ones are dropped),
 *                                         then compile
 *   node scripts/translations.js compile  write each .po as the .json the frontend reads
 *   node scripts/translations.js check    fail when a string has no translation or a .json is stale
 */
const fs = require('fs');
const path = require('path');

const ROOT = path.resolve(__dirname, '..');
const DOMAIN = 'hdsp_agent';
const SOURCE_DIR = path.join(ROOT, 'src');
const SERVER_DIR = path.join(ROOT, 'hdsp_agent');
const LOCALE_DIR = path.join(ROOT, 'hdsp_agent', 'locale');

const PLURAL_FORMS = { ko_KR: 'nplurals=1; plural=0;' };

/**
 * Every translatable string of the sources: [{msgid, msgid_plural?, msgctxt?, references}].
 */
function extractMessages(sourceDir = SOURCE_DIR) {
  const messages = new Map();
  const string = `'((?:\\\\.|[^'\\\\])*)'|"((?:\\\\.|[^"\\\\])*)"`;
  const call = new RegExp(
    `\\btrans\\.(__|_n|_p)\\(\\s*(?:${string})(?:\\s*,\\s*(?:${string}))?`,
    'g'
  );
  for (const file of sourceFiles(sourceDir)) {
    const text = fs.readFileSync(file, 'utf-8');
    for (const match of text.matchAll(call)) {
      const [, kind] = match;
      const first = unescape(match[2] ?? match[3]);
      const second =
        match[4] !== undefined || match[5] !== undefined
          ? unescape(match[4] ?? match[5])
          : undefined;
      const entry =
        kind === '_n'
          ? { msgid: first, msgid_plural: second }
          : kind === '_p'
            ? { msgctxt: first, msgid: second }
            : { msgid: first };
      const key = messageKey(entry);
      // File names only: line numbers would change the catalog with every edit of the sources.
      const reference = path.relative(ROOT, file);
      const known = messages.get(key);
      if (known) {
        if (!known.references.includes(reference)) {
          known.references.push(reference);
        }
      } else {
        messages.set(key, { ...entry, references: [reference] });
      }
    }
  }
  return [...messages.values()];
}

/**
 * The templates of the server's user-facing strings: the string literals (adjacent ones joined, as
 * Python joins them) that open every `user_text(` and `user_template(` call under hdsp_agent/.
 */
function extractServerMessages(serverDir = SERVER_DIR) {
  const messages = new Map();
  const literal = `(?:'(?:\\\\.|[^'\\\\\n])*'|"(?:\\\\.|[^"\\\\\n])*")`;
  const call = new RegExp(
    `\\buser_(?:text|template)\\(\\s*\\(?((?:\\s*${literal})+)\\s*[,)]`,
    'g'
  );
  const part = new RegExp(literal, 'g');
  for (const file of pythonFiles(serverDir)) {
    const text = fs.readFileSync(file, 'utf-8');
    for (const match of text.matchAll(call)) {
      const msgid = [...match[1].matchAll(part)]
        .map(([quoted]) => unescape(quoted.slice(1, -1)))
        .join('');
      // Placeholders only ("%1: %2", a joined list): nothing to translate.
      if (!/[A-Za-z]/.test(msgid.replace(/%\d+/g, ''))) {
        continue;
      }
      const reference = path.relative(ROOT, file);
      const known = messages.get(msgid);
      if (known) {
        if (!known.references.includes(reference)) {
          known.references.push(reference);
        }
      } else {
        messages.set(msgid, { msgid, references: [reference] });
      }
    }
  }
  return [...messages.values()];
}

function pythonFiles(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap(entry => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        return ['labextension', 'locale', '__pycache__'].includes(entry.name)
          ? []
          : pythonFiles(full);
      }
      return entry.name.endsWith('.py') ? [full] : [];
    })
    .sort();
}

/**
 * Everything the catalog holds: the sidebar's strings, then the server's (one entry per msgid).
 */
function allMessages() {
  const messages = extractMessages();
  const known = new Map(
    messages.map(message => [messageKey(message), message])
  );
  for (const message of extractServerMessages()) {
    const same = known.get(messageKey(message));
    if (same) {
      same.references.push(...message.references);
    } else {
      messages.push(message);
    }
  }
  return messages;
}

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === '__tests__' ? [] : sourceFiles(full);
    }
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')
      ? [full]
      : [];
  });
}

function unescape(text) {
  return text.replace(/\\(.)/g, (_, char) =>
    char === 'n' ? '\n' : char === 't' ? '\t' : char
  );
}

function messageKey(entry) {
  return entry.msgctxt ? `${entry.msgctxt}\u0004${entry.msgid}` : entry.msgid;
}

/**
 * A minimal gettext .po reader: header, msgctxt, msgid, msgid_plural, msgstr and msgstr[n].
 */
function parsePo(text) {
  const entries = [];
  let entry = null;
  let field = null;
  const flush = () => {
    if (entry && entry.msgid !== undefined) {
      entries.push(entry);
    }
    entry = null;
    field = null;
  };
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) {
      if (line === '' || (entry && entry.msgid !== undefined && field)) {
        if (line === '') {
          flush();
        }
      }
      continue;
    }
    const keyword =
      /^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+"(.*)"$/.exec(line);
    if (keyword) {
      if (
        keyword[1] === 'msgctxt' ||
        (keyword[1] === 'msgid' && entry?.msgstr)
      ) {
        flush();
      }
      entry = entry ?? { msgstr: null };
      const value = poUnquote(keyword[3]);
      if (keyword[1].startsWith('msgstr')) {
        const index = keyword[2] === undefined ? 0 : Number(keyword[2]);
        entry.msgstr = entry.msgstr ?? [];
        entry.msgstr[index] = value;
        field = ['msgstr', index];
      } else {
        entry[keyword[1]] = value;
        field = [keyword[1]];
      }
      continue;
    }
    if (line.startsWith('"') && entry && field) {
      const value = poUnquote(line.slice(1, -1));
      if (field[0] === 'msgstr') {
        entry.msgstr[field[1]] += value;
      } else {
        entry[field[0]] += value;
      }
    }
  }
  flush();
  return entries;
}

function poUnquote(text) {
  return text.replace(/\\(.)/g, (_, char) =>
    char === 'n' ? '\n' : char === 't' ? '\t' : char
  );
}

function poQuote(text) {
  const escaped = text
    .replace(/\\/g, '\\\\')
    .replace(/"/g, '\\"')
    .replace(/\t/g, '\\t');
  if (!escaped.includes('\n') || escaped === '\n') {
    return `"${escaped.replace(/\n/g, '\\n')}"`;
  }
  const lines = escaped.split('\n');
  return (
    '""\n' +
    lines
      .map((line, index) =>
        index < lines.length - 1 ? `"${line}\\n"` : `"${line}"`
      )
      .filter(line => line !== '""')
      .join('\n')
  );
}

function writePo(file, language, messages, translations, version) {
  const header = [
    `# Korean translation of the hdsp-agent sidebar.`,
    `# Update with: node scripts/translations.js update`,
    'msgid ""',
    'msgstr ""',
    `"Project-Id-Version: hdsp-agent ${version}\\n"`,
    `"Language: ${language}\\n"`,
    '"MIME-Version: 1.0\\n"',
    '"Content-Type: text/plain; charset=UTF-8\\n"',
    '"Content-Transfer-Encoding: 8bit\\n"',
    `"Plural-Forms: ${PLURAL_FORMS[language] ?? 'nplurals=2; plural=(n != 1);'}\\n"`,
    ''
  ];
  const body = messages.map(message => {
    const known = translations.get(messageKey(message)) ?? [];
    const lines = message.references.map(reference => `#: ${reference}`);
    if (message.msgctxt) {
      lines.push(`msgctxt ${poQuote(message.msgctxt)}`);
    }
    lines.push(`msgid ${poQuote(message.msgid)}`);
    if (message.msgid_plural !== undefined) {
      lines.push(`msgid_plural ${poQuote(message.msgid_plural)}`);
      const count = Math.max(1, nplurals(language));
      for (let index = 0; index < count; index++) {
        lines.push(`msgstr[${index}] ${poQuote(known[index] ?? '')}`);
      }
    } else {
      lines.push(`msgstr ${poQuote(known[0] ?? '')}`);
    }
    return lines.join('\n') + '\n';
  });
  fs.writeFileSync(file, header.join('\n') + '\n' + body.join('\n'));
}

function nplurals(language) {
  const match = /nplurals=(\d+)/.exec(PLURAL_FORMS[language] ?? 'nplurals=2');
  return Number(match[1]);
}

/**
 * The .po as the JSON JupyterLab's translation manager loads (Jed-style: msgid → [translations]).
 */
function compilePo(poText, language, version) {
  const compiled = {
    '': {
      domain: DOMAIN,
      // JupyterLab's Gettext files messages under the BCP 47 spelling it looks them up with (ko-KR).
      language: language.replace('_', '-'),
      plural_forms: PLURAL_FORMS[language] ?? 'nplurals=2; plural=(n != 1);',
      version
    }
  };
  for (const entry of parsePo(poText)) {
    if (!entry.msgid || !entry.msgstr || entry.msgstr.every(text => !text)) {
      continue;
    }
    // JupyterLab's Gettext takes an entry for a plural only when it holds more than one form; with a
    // single plural form (Korean) the second is padding, as in JupyterLab's own language packs.
    compiled[messageKey(entry)] =
      entry.msgid_plural !== undefined && entry.msgstr.length < 2
        ? [...entry.msgstr, '']
        : entry.msgstr;
  }
  return JSON.stringify(compiled, null, 2) + '\n';
}

function languages() {
  if (!fs.existsSync(LOCALE_DIR)) {
    return [];
  }
  return fs
    .readdirSync(LOCALE_DIR, { withFileTypes: true })
    .filter(entry => entry.isDirectory())
    .map(entry => entry.name);
}

function catalogPath(language, extension) {
  return path.join(
    LOCALE_DIR,
    language,
    'LC_MESSAGES',
    `${DOMAIN}.${extension}`
  );
}

function packageVersion() {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf-8'))
    .version;
}

function main(command) {
  const version = packageVersion();
  let problems = 0;
  for (const language of languages()) {
    const po = catalogPath(language, 'po');
    const json = catalogPath(language, 'json');
    const existing = fs.existsSync(po) ? fs.readFileSync(po, 'utf-8') : '';
    if (command === 'update') {
      const translations = new Map(
        parsePo(existing).map(entry => [messageKey(entry), entry.msgstr ?? []])
      );
      writePo(po, language, allMessages(), translations, version);
    }
    const compiled = compilePo(fs.readFileSync(po, 'utf-8'), language, version);
    if (command === 'check') {
      const table = JSON.parse(compiled);
      for (const message of allMessages()) {
        if (!table[messageKey(message)]) {
          console.error(
            `${language}: no translation for ${JSON.stringify(message.msgid)}`
          );
          problems++;
        }
      }
      if (!fs.existsSync(json) || fs.readFileSync(json, 'utf-8') !== compiled) {
        console.error(
          `${language}: ${path.relative(ROOT, json)} is stale: run compile`
        );
        problems++;
      }
    } else {
      fs.writeFileSync(json, compiled);
    }
  }
  return problems;
}

module.exports = {
  extractMessages,
  extractServerMessages,
  allMessages,
  parsePo,
  compilePo,
  messageKey,
  DOMAIN,
  LOCALE_DIR,
  catalogPath
};

if (require.main === module) {
  const command = process.argv[2];
  if (!['update', 'compile', 'check'].includes(command)) {
    console.error('usage: node scripts/translations.js update|compile|check');
    process.exit(2);
  }
  process.exit(main(command) > 0 ? 1 : 0);
}
