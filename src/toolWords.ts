/**
 * What a tool call does, in the user's words: "Insert a cell into errors.ipynb?" on the approval
 * card and "Insert a cell into errors.ipynb" on the tool card, rather than the tool's name and the
 * permission kind ("Allow insert_cell? FileWrite: /home/…/errors.ipynb"). The tool name, the full
 * path and the permission kind stay in the card's details.
 */
import { TranslationBundle } from '@jupyterlab/translation';

import { IApprovalRequest } from './tokens';

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

type Phrase = {
  /** With the subject (a file or notebook name). */
  withSubject?: (subject: string) => string;
  /** Without one (the active notebook, or a tool that acts on no file). */
  plain: string;
};

/**
 * The phrase of each built-in tool, as a question (approval) or as a statement (tool card).
 */
function phrases(
  trans: TranslationBundle
): Record<string, { question: Phrase; statement: Phrase }> {
  return {
    run_cell: {
      question: {
        withSubject: s => trans.__('Run a cell in %1?', s),
        plain: trans.__('Run a cell in the notebook?')
      },
      statement: {
        withSubject: s => trans.__('Run a cell in %1', s),
        plain: trans.__('Run a cell in the notebook')
      }
    },
    execute_code: {
      question: {
        withSubject: s => trans.__("Run code in %1's kernel?", s),
        plain: trans.__("Run code in the notebook's kernel?")
      },
      statement: {
        withSubject: s => trans.__("Run code in %1's kernel", s),
        plain: trans.__("Run code in the notebook's kernel")
      }
    },
    insert_cell: {
      question: {
        withSubject: s => trans.__('Insert a cell into %1?', s),
        plain: trans.__('Insert a cell into the notebook?')
      },
      statement: {
        withSubject: s => trans.__('Insert a cell into %1', s),
        plain: trans.__('Insert a cell into the notebook')
      }
    },
    edit_cell: {
      question: {
        withSubject: s => trans.__('Change a cell of %1?', s),
        plain: trans.__('Change a cell of the notebook?')
      },
      statement: {
        withSubject: s => trans.__('Change a cell of %1', s),
        plain: trans.__('Change a cell of the notebook')
      }
    },
    delete_cell: {
      question: {
        withSubject: s => trans.__('Delete a cell of %1?', s),
        plain: trans.__('Delete a cell of the notebook?')
      },
      statement: {
        withSubject: s => trans.__('Delete a cell of %1', s),
        plain: trans.__('Delete a cell of the notebook')
      }
    },
    move_cell: {
      question: {
        withSubject: s => trans.__('Move a cell in %1?', s),
        plain: trans.__('Move a cell in the notebook?')
      },
      statement: {
        withSubject: s => trans.__('Move a cell in %1', s),
        plain: trans.__('Move a cell in the notebook')
      }
    },
    restart_kernel: {
      question: {
        withSubject: s =>
          trans.__("Restart %1's kernel? Its variables are lost.", s),
        plain: trans.__(
          "Restart the notebook's kernel? Its variables are lost."
        )
      },
      statement: {
        withSubject: s => trans.__("Restart %1's kernel", s),
        plain: trans.__("Restart the notebook's kernel")
      }
    },
    interrupt_kernel: {
      question: {
        withSubject: s => trans.__("Interrupt %1's kernel?", s),
        plain: trans.__("Interrupt the notebook's kernel?")
      },
      statement: {
        withSubject: s => trans.__("Interrupt %1's kernel", s),
        plain: trans.__("Interrupt the notebook's kernel")
      }
    },
    create_new_file: {
      question: {
        withSubject: s => trans.__('Create the file %1?', s),
        plain: trans.__('Create a file?')
      },
      statement: {
        withSubject: s => trans.__('Create %1', s),
        plain: trans.__('Create a file')
      }
    },
    ...fileEdit(trans, [
      'edit_existing_file',
      'single_find_and_replace',
      'search_and_replace_in_file',
      'multi_edit'
    ]),
    run_terminal_command: {
      question: { plain: trans.__('Run this command in the terminal?') },
      statement: { plain: trans.__('Run a command') }
    },
    fetch_url_content: {
      question: { plain: trans.__('Fetch this web page?') },
      statement: { plain: trans.__('Fetch a web page') }
    },
    search_web: {
      question: { plain: trans.__('Search the web?') },
      statement: { plain: trans.__('Search the web') }
    },
    create_rule_block: {
      question: {
        plain: trans.__('Save a rule the agent follows in every chat?')
      },
      statement: { plain: trans.__('Save a rule') }
    },
    ...fileRead(trans, [
      'read_file',
      'read_file_range',
      'read_currently_open_file',
      'read_notebook',
      'read_cell'
    ]),
    ...listing(trans, ['ls', 'view_subdirectory']),
    grep_search: {
      question: { plain: trans.__('Search the files’ contents?') },
      statement: { plain: trans.__('Search the files’ contents') }
    },
    file_glob_search: {
      question: { plain: trans.__('Find files by name?') },
      statement: { plain: trans.__('Find files by name') }
    }
  };
}

function fileEdit(
  trans: TranslationBundle,
  names: string[]
): Record<string, { question: Phrase; statement: Phrase }> {
  const entry = {
    question: {
      withSubject: (s: string) => trans.__('Change the file %1?', s),
      plain: trans.__('Change a file?')
    },
    statement: {
      withSubject: (s: string) => trans.__('Change %1', s),
      plain: trans.__('Change a file')
    }
  };
  return Object.fromEntries(names.map(name => [name, entry]));
}

function fileRead(
  trans: TranslationBundle,
  names: string[]
): Record<string, { question: Phrase; statement: Phrase }> {
  const entry = {
    question: {
      withSubject: (s: string) => trans.__('Read %1?', s),
      plain: trans.__('Read a file?')
    },
    statement: {
      withSubject: (s: string) => trans.__('Read %1', s),
      plain: trans.__('Read a file')
    }
  };
  return Object.fromEntries(names.map(name => [name, entry]));
}

function listing(
  trans: TranslationBundle,
  names: string[]
): Record<string, { question: Phrase; statement: Phrase }> {
  const entry = {
    question: {
      withSubject: (s: string) => trans.__('List the folder %1?', s),
      plain: trans.__('List a folder?')
    },
    statement: {
      withSubject: (s: string) => trans.__('List %1', s),
      plain: trans.__('List a folder')
    }
  };
  return Object.fromEntries(names.map(name => [name, entry]));
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
