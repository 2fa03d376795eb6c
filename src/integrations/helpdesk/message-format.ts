/**
 * Text formatting between WhatsApp (`*bold*`, `_italic_`, `~strike~`) and Chatwoot's Markdown
 * (`**bold**`, `*italic*`, `~~strike~~`). A marker counts only around a word (not inside `2*3*4`).
 */

const WHATSAPP_MARKS = /(^|[\s([{"'])([*_~])(?=\S)([^\n]*?\S)\2(?=$|[\s)\]}.,;:!?"'])/g;
const MARKDOWN_MARKS = /(^|[\s([{"'])(\*\*|\*|_|~~)(?=\S)([^\n]*?\S)\2(?=$|[\s)\]}.,;:!?"'])/g;

const TO_MARKDOWN: Record<string, string> = { '*': '**', _: '*', '~': '~~' };
const TO_WHATSAPP: Record<string, string> = { '**': '*', '*': '_', _: '_', '~~': '~' };

export function whatsappToMarkdown(text: string): string {
  return text.replace(
    WHATSAPP_MARKS,
    (_m, lead: string, mark: string, inner: string) => `${lead}${TO_MARKDOWN[mark]}${inner}${TO_MARKDOWN[mark]}`,
  );
}

export function markdownToWhatsapp(text: string): string {
  return text.replace(
    MARKDOWN_MARKS,
    (_m, lead: string, mark: string, inner: string) => `${lead}${TO_WHATSAPP[mark]}${inner}${TO_WHATSAPP[mark]}`,
  );
}

/** An agent's signature as WhatsApp shows it: the name in bold on its own line. */
export function signed(agentName: string | undefined, text: string): string {
  const name = agentName?.trim();
  if (!name) return text;
  return text ? `*${name}:*\n${text}` : `*${name}:*`;
}
