const jestJupyterLab = require('@jupyterlab/testutils/lib/jest-config');

// ES modules that jest must transform as well.
const esModules = [
  '@codemirror',
  '@jupyter/ydoc',
  '@jupyter/react-components',
  '@jupyter/web-components',
  '@jupyterlab/',
  '@microsoft',
  'exenv-es6',
  'lib0',
  'nanoid',
  'vscode-ws-jsonrpc',
  'y-protocols',
  'y-websocket',
  'yjs'
].join('|');

const baseConfig = jestJupyterLab(__dirname);

module.exports = {
  ...baseConfig,
  automock: false,
  collectCoverageFrom: ['src/**/*.{ts,tsx}', '!src/**/*.d.ts'],
  coverageReporters: ['lcov', 'text'],
  // Only src: keeps jest out of .venv, hdsp_agent/labextension and ui-tests.
  roots: ['<rootDir>/src'],
  reporters: ['default'],
  setupFiles: [
    ...(baseConfig.setupFiles ?? []),
    '<rootDir>/src/__tests__/setup.ts'
  ],
  testRegex: 'src/.*/.*.spec.ts[x]?$',
  transformIgnorePatterns: [`/node_modules/(?!${esModules}).+`]
};
