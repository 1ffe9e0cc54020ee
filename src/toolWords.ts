/**
 * What a tool call does, in the user's words: "Insert a cell into errors.ipynb?" on the approval
 * card and "Insert a cell into errors.ipynb" on the tool card, rather than the tool's name and the
 * permission kind ("Allow insert_cell? FileWrite: /home/…/errors.ipynb"). The tool name, the full
 * path and the permission kind stay in the card's details.
 */
import { TranslationBundle } from '@jupyterlab/translation';

import { IApprovalRequest } from './tokens';
import { TOOL_WORDS } from './toolWordsTable';

/**
 * The last part of a path (the notebook or file the user knows by name).
 */
export function baseName(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, '');
  const parts = trimmed.split(/[\\/]/);
  return parts[parts.length - 1] || trimmed;
}

/**
 * The file or notebook a call acts on: the path the server resolved for the approval, else the
 * path argument, by its base name; '' when the call names none.
 */
export function callSubject(
  args: Record<string, unknown> | null | undefined,
  actionTarget?: string | null
): string {
  if (actionTarget && /[\\/.]/.test(actionTarget)) {
    return baseName(actionTarget);
  }
  for (const key of ['filepath', 'path', 'dirPath', 'directory_path']) {
    const value = args?.[key];
    if (typeof value === 'string' && value.trim()) {
      return baseName(value.trim());
    }
  }
  return '';
}

/**
 * A built-in tool's words, declared with the tool on the server (`ToolFacts.words`,
 * hdsp_agent/tools/facts.py) and generated into toolWordsTable.ts: English templates, `%1` the subject.
 */
export interface IToolWords {
  question: string;
  statement: string;
  question_with_subject?: string;
  statement_with_subject?: string;
}

type Phrase = {
  /** With the subject (a file or notebook name). */
  withSubject?: (subject: string) => string;
  /** Without one (the active notebook, or a tool that acts on no file). */
  plain: string;
};

function phrase(
  trans: TranslationBundle,
  plain: string,
  withSubject: string | undefined
): Phrase {
  // The templates are the server's strings (`user_template` in the tools' facts), in the catalog as such:
  // extracted from hdsp_agent/, not from here.
  return {
    withSubject: withSubject
      ? // eslint-disable-next-line jupyter/no-dynamic-translation
        s => trans.__(withSubject, s)
      : undefined,
    // eslint-disable-next-line jupyter/no-dynamic-translation
    plain: trans.__(plain)
  };
}

/**
 * The phrase of each built-in tool, as a question (approval) or as a statement (tool card).
 */
function phrases(
  trans: TranslationBundle
): Record<string, { question: Phrase; statement: Phrase }> {
  return Object.fromEntries(
    Object.entries(TOOL_WORDS).map(([name, words]) => [
      name,
      {
        question: phrase(trans, words.question, words.question_with_subject),
        statement: phrase(trans, words.statement, words.statement_with_subject)
      }
    ])
  );
}

function say(phrase: Phrase, subject: string): string {
  return subject && phrase.withSubject
    ? phrase.withSubject(subject)
    : phrase.plain;
}

/**
 * The approval card's headline: what the call would do, as a question.
 */
export function approvalQuestion(
  request: IApprovalRequest,
  trans: TranslationBundle
): string {
  const subject = callSubject(request.arguments, request.action_target);
  const known = phrases(trans)[request.tool];
  if (known) {
    return say(known.question, subject);
  }
  // A tool of an MCP server or a newer server: by what it does to what.
  switch (request.action_kind) {
    case 'FileWrite':
      return subject
        ? trans.__('Let %1 write to %2?', request.tool, subject)
        : trans.__('Let %1 write files?', request.tool);
    case 'FileDelete':
      return subject
        ? trans.__('Let %1 delete %2?', request.tool, subject)
        : trans.__('Let %1 delete files?', request.tool);
    case 'FileRead':
    case 'FileReadSensitive':
      return subject
        ? trans.__('Let %1 read %2?', request.tool, subject)
        : trans.__('Let %1 read files?', request.tool);
    case 'Network':
      return trans.__('Let %1 use the network?', request.tool);
    case 'Execute':
    case 'Kernel':
      return trans.__('Let %1 run code?', request.tool);
    default:
      return trans.__('Use the tool %1?', request.tool);
  }
}

/**
 * The tool card's headline: what the call does, as a statement; the tool's own name when it is not
 * one of ours.
 */
export function toolHeadline(
  name: string,
  args: Record<string, unknown> | null | undefined,
  trans: TranslationBundle
): string | null {
  const known = phrases(trans)[name];
  return known ? say(known.statement, callSubject(args)) : null;
}
