/**
 * The frontend's layer rule (docs/architecture.md): every call to the server's HTTP routes goes through
 * api.ts, the only module that imports request.ts; the Python twin is tests/test_layers.py.
 */
import * as fs from 'fs';
import * as path from 'path';

const SRC = path.resolve(__dirname, '..');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      return entry.name === '__tests__' ? [] : sources(full);
    }
    return /\.tsx?$/.test(entry.name) ? [full] : [];
  });
}

describe('the frontend layers', () => {
  it('has one module calling the server routes: api.ts', () => {
    const callers = sources(SRC)
      .filter(file =>
        /from '(\.\.?\/)+request'/.test(fs.readFileSync(file, 'utf8'))
      )
      .map(file => path.relative(SRC, file));
    expect(callers).toEqual(['api.ts']);
  });

  it('lets no module but api.ts and request.ts use fetch or makeRequest directly', () => {
    const direct = sources(SRC)
      .filter(file => !/(^|\/)(api|request)\.ts$/.test(file))
      .filter(file =>
        // A call, not a method of that name (the inline completion provider's `async fetch(`).
        /(^|[^.\w])(?<!async )fetch\(|ServerConnection\.makeRequest\(/.test(
          fs.readFileSync(file, 'utf8')
        )
      )
      .map(file => path.relative(SRC, file));
    expect(direct).toEqual([]);
  });
});
