import packageJson from '../package.json';

/**
 * The version of this frontend. package.json is the only place it is written; the Python
 * package's version is derived from the same field by hatch-nodejs-version.
 */
export const FRONTEND_VERSION: string = packageJson.version;

const PRE_RELEASE_TAGS: Record<string, string> = {
  a: 'a',
  alpha: 'a',
  b: 'b',
  beta: 'b',
  c: 'rc',
  rc: 'rc',
  pre: 'rc',
  preview: 'rc'
};

/**
 * Spell a version the PEP 440 way, so that the npm spelling of a pre-release
 * (`0.2.0-alpha.1`, `1.0.0-rc.2`, `0.3.0-dev.0`) equals the Python one (`0.2.0a1`, `1.0.0rc2`,
 * `0.3.0.dev0`). Versions that do not parse are returned trimmed and lowercased.
 */
export function normalizeVersion(version: string): string {
  const match =
    /^v?(\d+(?:\.\d+)*)(?:[-.]?(alpha|beta|preview|pre|a|b|c|rc)[-.]?(\d*))?(?:[-.]?dev[-.]?(\d*))?(?:\+.*)?$/.exec(
      version.trim().toLowerCase()
    );
  if (!match) {
    return version.trim().toLowerCase();
  }
  const [, release, preTag, preNumber, devNumber] = match;
  let normalized = release;
  if (preTag) {
    normalized += `${PRE_RELEASE_TAGS[preTag]}${preNumber || '0'}`;
  }
  if (devNumber !== undefined) {
    normalized += `.dev${devNumber || '0'}`;
  }
  return normalized;
}

/**
 * Whether a frontend and a server version are the same release.
 */
export function versionsMatch(frontend: string, server: string): boolean {
  return normalizeVersion(frontend) === normalizeVersion(server);
}
