import { nullTranslator } from '@jupyterlab/translation';
import { render } from '@testing-library/react';
import * as React from 'react';

import { SandboxNotice } from '../components/ServerStatus';
import { ISandboxInfo } from '../tokens';

const trans = nullTranslator.load('hdsp_agent');

function notice(sandbox: ISandboxInfo | undefined): HTMLElement | null {
  const { container } = render(
    <SandboxNotice sandbox={sandbox} trans={trans} />
  );
  return container.querySelector('[role="note"]');
}

describe('SandboxNotice', () => {
  it('says the sandbox is off, why, and that shell commands ask', () => {
    const note = notice({
      layer: 'none',
      active: false,
      reason: 'user namespaces are disabled in this container.',
      required: false
    });
    expect(note?.textContent).toBe(
      'Sandbox off: user namespaces are disabled in this container. Shell commands will ask first.'
    );
  });

  it('says shell commands will not run when the admin requires the sandbox', () => {
    const note = notice({
      layer: 'none',
      active: false,
      reason: 'bwrap is not installed',
      required: true
    });
    expect(note?.textContent).toBe(
      'Sandbox off: bwrap is not installed. Shell commands will not run: the administrator requires the sandbox.'
    );
  });

  it.each([
    [
      'an active sandbox',
      { layer: 'bubblewrap', active: true, reason: '', required: false }
    ],
    [
      'the Landlock fallback',
      {
        layer: 'landlock',
        active: true,
        reason: 'no user namespaces',
        required: false
      }
    ],
    ['a server without the field', undefined]
  ] as [string, ISandboxInfo | undefined][])(
    'shows nothing for %s',
    (_name, sandbox) => {
      expect(notice(sandbox)).toBeNull();
    }
  );
});
