import { Dialog, InputDialog, showDialog } from '@jupyterlab/apputils';
import { TranslationBundle } from '@jupyterlab/translation';

/**
 * Ask before deleting a conversation; resolves true when the user confirms.
 */
export async function confirmDeleteConversation(
  title: string,
  trans: TranslationBundle
): Promise<boolean> {
  const result = await showDialog({
    title: trans.__('Delete conversation'),
    body: trans.__(
      'Delete "%1" and its history? This cannot be undone.',
      title
    ),
    buttons: [
      Dialog.cancelButton({ label: trans.__('Cancel') }),
      Dialog.warnButton({ label: trans.__('Delete') })
    ]
  });
  return result.button.accept;
}

/**
 * Ask for a conversation's new title; resolves null when the user cancels or leaves it empty.
 */
export async function askConversationTitle(
  current: string,
  trans: TranslationBundle
): Promise<string | null> {
  const result = await InputDialog.getText({
    title: trans.__('Rename conversation'),
    text: current,
    okLabel: trans.__('Rename'),
    cancelLabel: trans.__('Cancel')
  });
  const title = result.value?.trim();
  return result.button.accept && title ? title : null;
}
