import { nullTranslator } from '@jupyterlab/translation';
import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import * as React from 'react';

import { ApprovalQueue } from '../components/ApprovalCard';
import { IToolCallState } from '../conversation';
import { IApprovalRequest } from '../tokens';

const trans = nullTranslator.load('hdsp_agent');

function pending(
  callId: string,
  request: Partial<IApprovalRequest> = {}
): IToolCallState {
  const approval: IApprovalRequest = {
    call_id: callId,
    tool: 'run_cell',
    arguments: { code: 'print(6*7)' },
    reasons: ['needs approval: Kernel analysis.ipynb'],
    preview: 'print(6*7)',
    action_kind: 'Kernel',
    action_target: 'analysis.ipynb',
    ...request
  };
  return {
    callId,
    name: approval.tool,
    status: 'awaiting_approval',
    rawArguments: null,
    arguments: approval.arguments,
    content: null,
    error: null,
    details: null,
    progress: null,
    approval,
    resolution: null,
    startedAt: null,
    finishedAt: null
  };
}

function queue(calls: IToolCallState[]) {
  const onApprove = jest.fn(async () => undefined);
  const onDeny = jest.fn(async () => undefined);
  render(
    <ApprovalQueue
      pending={calls}
      onApprove={onApprove}
      onDeny={onDeny}
      trans={trans}
    />
  );
  return { onApprove, onDeny };
}

describe('ApprovalQueue', () => {
  it('shows the tool, what it acts on, why it asks and the code it would run', () => {
    queue([pending('c1')]);

    const dialog = screen.getByRole('dialog', {
      name: 'Run a cell in analysis.ipynb?'
    });
    // The permission kind is no headline: it is in the details with the tool's name.
    expect(dialog.textContent).not.toContain('Kernel: analysis.ipynb');
    expect(
      dialog.querySelector('.jp-hdsp-ApprovalCard-target')?.textContent
    ).toBe('analysis.ipynb');
    expect(
      dialog.querySelector('.jp-hdsp-ApprovalCard-tool')?.textContent
    ).toBe('Tool run_cell · permission Kernel');
    expect(
      screen.getByText('needs approval: Kernel analysis.ipynb')
    ).toBeTruthy();
    expect(screen.getByLabelText('Preview').textContent).toBe('print(6*7)');
    expect(dialog.getAttribute('aria-describedby')).toBeTruthy();
  });

  it('shows a diff preview as a colored diff', () => {
    queue([
      pending('c1', {
        tool: 'edit_existing_file',
        preview: '--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n'
      })
    ]);
    const preview = screen.getByLabelText('Preview');
    expect(preview.querySelector('.jp-hdsp-Diff-remove')?.textContent).toBe(
      '-a = 1'
    );
    expect(preview.querySelector('.jp-hdsp-Diff-add')?.textContent).toBe(
      '+a = 2'
    );
  });

  it.each([
    ['Allow once', 'once'],
    ['Allow for this chat', 'session']
  ])('"%s" approves with scope %s', async (label, scope) => {
    const { onApprove } = queue([pending('c1')]);

    fireEvent.click(screen.getByRole('button', { name: label }));

    await waitFor(() => expect(onApprove).toHaveBeenCalledWith('c1', scope));
  });

  it.each([
    ['Only analysis.ipynb', 'exact'],
    ['Anything in the project folder', 'folder'],
    ['Everywhere', 'everywhere']
  ])(
    '"Always allow…" for a notebook asks where first: "%s" saves scope %s',
    async (label, ruleScope) => {
      const { onApprove } = queue([pending('c1')]);

      fireEvent.click(screen.getByRole('button', { name: 'Always allow…' }));
      expect(onApprove).not.toHaveBeenCalled();
      const where = screen.getByRole('group', { name: 'Always allow where?' });
      expect(where).toBeTruthy();
      fireEvent.click(screen.getByRole('button', { name: label }));

      await waitFor(() =>
        expect(onApprove).toHaveBeenCalledWith('c1', 'always', ruleScope)
      );
    }
  );

  it('names the folder of a file in a subfolder', () => {
    queue([
      pending('c1', {
        tool: 'edit_existing_file',
        arguments: { filepath: 'src/utils.py' },
        action_kind: 'FileWrite',
        action_target: '/home/me/project/src/utils.py'
      })
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Always allow…' }));
    expect(screen.getByRole('button', { name: 'Only utils.py' })).toBeTruthy();
    expect(
      screen.getByRole('button', { name: 'Anything in the folder src' })
    ).toBeTruthy();
  });

  it('saves a command "always" exactly, without asking where', async () => {
    const { onApprove } = queue([
      pending('c1', {
        tool: 'run_terminal_command',
        arguments: { command: 'make test' },
        action_kind: 'Execute',
        action_target: 'make test'
      })
    ]);

    fireEvent.click(screen.getByRole('button', { name: 'Always allow' }));

    await waitFor(() => expect(onApprove).toHaveBeenCalledWith('c1', 'always'));
    expect(
      screen.queryByRole('group', { name: 'Always allow where?' })
    ).toBeNull();
  });

  it('denies with the reason typed, on Enter', async () => {
    const { onDeny, onApprove } = queue([pending('c1')]);

    fireEvent.click(screen.getByRole('button', { name: 'Deny…' }));
    const reason = screen.getByRole('textbox', { name: 'Reason for denying' });
    expect(document.activeElement).toBe(reason);
    fireEvent.change(reason, { target: { value: 'use the test notebook' } });
    fireEvent.keyDown(reason, { key: 'Enter' });

    await waitFor(() =>
      expect(onDeny).toHaveBeenCalledWith('c1', 'use the test notebook')
    );
    expect(onApprove).not.toHaveBeenCalled();
  });

  it('denies without a reason, and Escape goes back to the choices', async () => {
    const { onDeny } = queue([pending('c1')]);

    fireEvent.click(screen.getByRole('button', { name: 'Deny…' }));
    fireEvent.keyDown(
      screen.getByRole('textbox', { name: 'Reason for denying' }),
      {
        key: 'Escape'
      }
    );
    expect(screen.getByRole('button', { name: 'Allow once' })).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Deny…' }));
    fireEvent.click(screen.getByRole('button', { name: 'Deny' }));
    await waitFor(() => expect(onDeny).toHaveBeenCalledWith('c1', ''));
  });

  it('queues several approvals visibly, answering the oldest first', async () => {
    const { onApprove } = queue([
      pending('c1'),
      pending('c2', { tool: 'run_terminal_command' }),
      pending('c3', { tool: 'create_new_file' })
    ]);

    expect(screen.getAllByRole('dialog')).toHaveLength(1);
    expect(screen.getByText('1 of 3')).toBeTruthy();
    const waiting = screen.getByRole('list', { name: 'Approvals waiting' });
    expect(waiting.textContent).toContain(
      '2. Run this command in the terminal?'
    );
    expect(waiting.textContent).toContain('3. Create the file analysis.ipynb?');

    fireEvent.click(screen.getByRole('button', { name: 'Allow once' }));
    await waitFor(() => expect(onApprove).toHaveBeenCalledWith('c1', 'once'));
  });

  it.each([
    [
      'sandboxed',
      'Runs in the sandbox: no network, only the project folder is writable.'
    ],
    [
      'network',
      'Runs in the sandbox with network access; only the project folder is writable.'
    ],
    ['unsandboxed', 'Runs outside the sandbox, with your full permissions.']
  ] as const)('says how a %s command will run', (mode, words) => {
    queue([
      pending('c1', {
        tool: 'run_terminal_command',
        arguments: { command: 'make test' },
        run_mode: mode
      })
    ]);
    const line = screen.getByText(words);
    expect(line.getAttribute('data-run-mode')).toBe(mode);
  });

  it('says nothing of a sandbox for a call that has no run mode', () => {
    const { container } = render(
      <ApprovalQueue
        pending={[pending('c1', { run_mode: null })]}
        onApprove={jest.fn()}
        onDeny={jest.fn()}
        trans={trans}
      />
    );
    expect(container.querySelector('[data-run-mode]')).toBeNull();
    expect(container.textContent).not.toMatch(/sandbox/i);
  });

  it.each<[Partial<IApprovalRequest>, string]>([
    [
      {
        tool: 'insert_cell',
        arguments: { source: 'x' },
        action_kind: 'FileWrite',
        action_target: '/home/me/project/errors.ipynb'
      },
      'Insert a cell into errors.ipynb?'
    ],
    [
      {
        tool: 'edit_existing_file',
        arguments: { filepath: 'src/utils.py' },
        action_kind: 'FileWrite',
        action_target: null
      },
      'Change the file utils.py?'
    ],
    [
      {
        tool: 'run_terminal_command',
        arguments: { command: 'make test' },
        action_kind: 'Execute',
        action_target: 'make test'
      },
      'Run this command in the terminal?'
    ],
    [
      {
        tool: 'files__write',
        arguments: { path: 'out.txt' },
        action_kind: 'FileWrite',
        action_target: 'out.txt'
      },
      'Let files__write write to out.txt?'
    ],
    [
      {
        tool: 'demo__echo',
        arguments: {},
        action_kind: null,
        action_target: null
      },
      'Use the tool demo__echo?'
    ]
  ])('asks in words: %j', (request, words) => {
    queue([pending('c1', request)]);
    expect(screen.getByRole('dialog', { name: words })).toBeTruthy();
  });

  it('renders nothing when nothing waits', () => {
    const { container } = render(
      <ApprovalQueue
        pending={[]}
        onApprove={jest.fn()}
        onDeny={jest.fn()}
        trans={trans}
      />
    );
    expect(container.innerHTML).toBe('');
  });
});
