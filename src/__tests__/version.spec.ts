import { normalizeVersion, versionsMatch } from '../version';

describe('normalizeVersion', () => {
  it.each([
    ['0.1.0', '0.1.0'],
    ['v0.1.0', '0.1.0'],
    ['0.2.0-alpha.1', '0.2.0a1'],
    ['0.2.0a1', '0.2.0a1'],
    ['1.0.0-beta.2', '1.0.0b2'],
    ['1.0.0-rc.1', '1.0.0rc1'],
    ['1.0.0rc1', '1.0.0rc1'],
    ['0.3.0-dev.0', '0.3.0.dev0'],
    ['0.3.0.dev0', '0.3.0.dev0'],
    ['0.3.0-alpha.1.dev2', '0.3.0a1.dev2'],
    ['dev', 'dev']
  ])('spells %s as %s', (version, expected) => {
    expect(normalizeVersion(version)).toBe(expected);
  });
});

describe('versionsMatch', () => {
  it('matches the same release in either spelling', () => {
    expect(versionsMatch('1.0.0-rc.1', '1.0.0rc1')).toBe(true);
  });

  it('does not match different releases or pre-releases', () => {
    expect(versionsMatch('0.1.0', '0.2.0')).toBe(false);
    expect(versionsMatch('0.2.0-alpha.1', '0.2.0a2')).toBe(false);
    expect(versionsMatch('0.2.0', '0.2.0rc1')).toBe(false);
  });
});
