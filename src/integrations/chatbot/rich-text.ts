/**
 * A flow's text bubble as WhatsApp formatting: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, links as
 * `text (url)`, numbered and dashed lists. Typebot sends Plate rich text (`p`, `a`, `ol`, `ul`, `li`,
 * `lic`, `inline-variable`, leaves with marks) or, when asked, CommonMark; both are converted here.
 */

interface RichNode {
  type?: string;
  text?: string;
  url?: string;
  children?: unknown[];
  bold?: boolean;
  italic?: boolean;
  strikethrough?: boolean;
  underline?: boolean;
  code?: boolean;
}

const asNode = (value: unknown): RichNode => (typeof value === 'object' && value !== null ? value : {});
const isLeaf = (n: RichNode) => typeof n.text === 'string';
const children = (n: RichNode) => (Array.isArray(n.children) ? n.children.map(asNode) : []);

/** `*x*` around the non-blank core only: WhatsApp needs the markers next to the text. */
function wrap(text: string, marker: string, close = marker): string {
  const m = /^(\s*)([\s\S]*?)(\s*)$/.exec(text)!;
  return m[2] ? `${m[1]}${marker}${m[2]}${close}${m[3]}` : text;
}

const marksOf = (n: RichNode) =>
  `${n.code ? 'c' : ''}${n.bold ? 'b' : ''}${n.italic ? 'i' : ''}${n.strikethrough ? 's' : ''}`;

function leaf(n: RichNode): string {
  let t = n.text ?? '';
  if (n.code) return wrap(t, '`');
  if (n.bold) t = wrap(t, '*');
  if (n.italic) t = wrap(t, '_');
  if (n.strikethrough) t = wrap(t, '~');
  return t;
}

function inline(nodes: RichNode[]): string {
  let out = '';
  // Neighbouring leaves with the same marks are one run: `*Hel**lo*` would not render as bold.
  let run: RichNode | undefined;
  const flush = () => {
    if (run) out += leaf(run);
    run = undefined;
  };
  for (const n of nodes) {
    if (isLeaf(n)) {
      if (run && marksOf(run) === marksOf(n)) run = { ...run, text: `${run.text ?? ''}${n.text ?? ''}` };
      else {
        flush();
        run = n;
      }
      continue;
    }
    flush();
    if (n.type === 'a') {
      const label = inline(children(n)).trim();
      const url = typeof n.url === 'string' ? n.url : '';
      out += !url ? label : !label || label === url ? url : `${label} (${url})`;
    } else {
      out += inline(children(n));
    }
  }
  flush();
  return out;
}

function list(n: RichNode, depth: number): string[] {
  const ordered = n.type === 'ol';
  const lines: string[] = [];
  let index = 0;
  for (const item of children(n)) {
    const indent = '  '.repeat(depth);
    const parts = children(item);
    const content = parts.filter((p) => p.type !== 'ol' && p.type !== 'ul');
    const nested = parts.filter((p) => p.type === 'ol' || p.type === 'ul');
    lines.push(`${indent}${ordered ? `${++index}.` : '-'} ${inline(content).trim()}`);
    for (const sub of nested) lines.push(...list(sub, depth + 1));
  }
  return lines;
}

function blocks(nodes: RichNode[]): string[] {
  const lines: string[] = [];
  for (const n of nodes) {
    if (n.type === 'ol' || n.type === 'ul') lines.push(...list(n, 0));
    else if (n.type === 'variable') lines.push(...blocks(children(n)));
    else if (n.type === 'blockquote') {
      lines.push(
        ...inline(children(n))
          .split('\n')
          .map((l) => `> ${l}`),
      );
    } else if (n.type && /^h[1-6]$/.test(n.type)) lines.push(wrap(inline(children(n)), '*'));
    else lines.push(isLeaf(n) ? leaf(n) : inline(children(n)));
  }
  return lines;
}

/** Plate rich text (an array of block elements) → WhatsApp text. */
export function richTextToWhatsApp(richText: unknown[]): string {
  return blocks(richText.map(asNode))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** CommonMark (as Typebot serialises a bubble) → WhatsApp text; backslash escapes come out as plain characters. */
export function markdownToWhatsApp(markdown: string): string {
  const escaped: string[] = [];
  const code: string[] = [];
  let t = markdown
    .replace(/\\([\\`*_{}[\]()#+\-.!|~<>])/g, (_m, c: string) => `\u0001${escaped.push(c) - 1}\u0001`)
    .replace(/`[^`\n]+`/g, (m) => `\u0003${code.push(m) - 1}\u0003`);
  t = t
    .split('\n')
    .map((line) => line.replace(/^(\s*)[*+-]\s+/, '$1- ').replace(/^#{1,6}\s+(.*?)\s*#*\s*$/, '\u0002$1\u0002'))
    .join('\n')
    .replace(/\[([^\]\n]*)\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g, (_m, label: string, url: string) =>
      !label || label === url ? url : `${label} (${url})`,
    )
    .replace(
      /\*\*(?=\S)([\s\S]*?\S)\*\*|__(?=\S)([\s\S]*?\S)__/g,
      (_m, a?: string, b?: string) => `\u0002${a ?? b}\u0002`,
    )
    .replace(/\*(?=\S)([^*\n]*?\S)\*/g, '_$1_')
    .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '~$1~')
    .replace(/\u0002/g, '*');
  return t
    .replace(/\u0003(\d+)\u0003/g, (_m, i: string) => code[Number(i)]!)
    .replace(/\u0001(\d+)\u0001/g, (_m, i: string) => escaped[Number(i)]!)
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
