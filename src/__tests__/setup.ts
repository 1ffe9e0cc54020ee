// jsdom has no Clipboard API; JupyterLab's apputils warns about it on import. The copy button is
// tested through a spy on Clipboard.copyToSystem.
Object.defineProperty(window.navigator, 'clipboard', {
  configurable: true,
  value: {
    read: async () => [],
    readText: async () => '',
    write: async () => undefined,
    writeText: async () => undefined
  }
});
