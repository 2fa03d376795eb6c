import type { Button, PixPayment } from '../../msgnet/msgnet-driver.js';
import { buttonMessages, markupMessages, parseMarkup } from './markup-parser.js';
import { markdownToWhatsApp, richTextToWhatsApp } from './rich-text.js';
import type { TypebotInput, TypebotResponse } from './typebot-client.js';

/**
 * One thing to send to the contact, as it waits in a session (plain JSON: it is stored, and a new owner
 * sends what the old one did not). Media are kept as URLs and downloaded when sent.
 */
export type Reply =
  | { kind: 'text'; text: string }
  | { kind: 'buttons'; text: string; buttons: Button[] }
  | { kind: 'payment'; payment: PixPayment }
  | { kind: 'media'; media: 'image' | 'video' | 'audio'; url: string }
  /** A pause of the flow; `dedicated`: afterwards the flow is continued without a message for the rest. */
  | { kind: 'wait'; seconds: number; dedicated: boolean };

/** A choice the flow offers; a button reply carries its id. */
export interface Choice {
  id: string;
  label: string;
}

/** What one answer of the flow means for the conversation. */
export interface FlowStep {
  replies: Reply[];
  /** The choice input the flow now waits on (empty for any other input). */
  choices: Choice[];
  /** No input and nothing to continue: the flow is over (Typebot has deleted its session). */
  ended: boolean;
}

/** Typebot's own WhatsApp adapter waits at most this long. */
export const MAX_WAIT_SECONDS = 10;

function textOf(content: unknown): string | undefined {
  if (typeof content !== 'object' || content === null) return undefined;
  const c = content as { type?: unknown; richText?: unknown; markdown?: unknown; plainText?: unknown };
  if (Array.isArray(c.richText)) return richTextToWhatsApp(c.richText);
  if (typeof c.markdown === 'string') return markdownToWhatsApp(c.markdown);
  if (typeof c.plainText === 'string') return c.plainText;
  return undefined;
}

const urlOf = (content: unknown): string | undefined => {
  const url = (content as { url?: unknown } | undefined)?.url;
  return typeof url === 'string' && /^https?:\/\//i.test(url) ? url : undefined;
};

function videoReplies(content: unknown): Reply[] {
  const c = (content ?? {}) as { url?: unknown; type?: unknown; id?: unknown };
  const url = urlOf(content);
  const kind = typeof c.type === 'string' ? c.type : 'url';
  if (kind === 'url' && url) return [{ kind: 'media', media: 'video', url }];
  // A hosted video (YouTube, Vimeo…) cannot be downloaded: its link is sent.
  if (url) return [{ kind: 'text', text: url }];
  if (typeof c.id === 'string' && kind === 'youtube') {
    return [{ kind: 'text', text: `https://www.youtube.com/watch?v=${encodeURIComponent(c.id)}` }];
  }
  if (typeof c.id === 'string' && kind === 'vimeo') {
    return [{ kind: 'text', text: `https://vimeo.com/${encodeURIComponent(c.id)}` }];
  }
  return [];
}

function messageReplies(message: TypebotResponse['messages'][number]): Reply[] {
  switch (message.type) {
    case 'text': {
      const text = textOf(message.content);
      return text === undefined ? [] : markupMessages(parseMarkup(text));
    }
    case 'image':
    case 'audio': {
      const url = urlOf(message.content);
      return url ? [{ kind: 'media', media: message.type, url }] : [];
    }
    case 'video':
      return videoReplies(message.content);
    default:
      // Embeds and custom embeds only make sense in a browser.
      return [];
  }
}

function waitOf(action: NonNullable<TypebotResponse['clientSideActions']>[number]): Reply | undefined {
  if (action.type !== 'wait') return undefined;
  const seconds = Number(action.wait?.secondsToWaitFor ?? 0);
  return {
    kind: 'wait',
    seconds: Number.isFinite(seconds) ? Math.min(Math.max(seconds, 0), MAX_WAIT_SECONDS) : 0,
    dedicated: action.expectsDedicatedReply === true,
  };
}

function choicesOf(input: TypebotInput): Choice[] {
  if (input.type !== 'choice input' && input.type !== 'picture choice input') return [];
  return (input.items ?? []).map((i) => ({
    id: i.id,
    label: (i.content ?? i.title ?? i.value ?? i.id).trim() || i.id,
  }));
}

/** A choice input as messages: reply buttons (ids = item ids) in groups of three, the last text as their body. */
function inputReplies(input: TypebotInput, choices: Choice[], before: Reply[]): Reply[] {
  if (choices.length === 0) return before;
  if (input.options?.isMultipleChoice) {
    return [...before, { kind: 'text', text: choices.map((c, i) => `${i + 1}. ${c.label}`).join('\n') }];
  }
  const last = before.at(-1);
  const body = last?.kind === 'text' ? last.text : '';
  const head = last?.kind === 'text' ? before.slice(0, -1) : before;
  const buttons: Button[] = choices.map((c) => ({ type: 'reply', id: c.id, label: c.label }));
  return [...head, ...(buttonMessages(body, buttons) as Reply[])];
}

/**
 * The replies of one startChat/continueChat answer, in order: actions without a bubble first, each
 * bubble followed by the waits attached to it, then the input's buttons.
 */
export function flowStep(response: TypebotResponse): FlowStep {
  const actions = response.clientSideActions ?? [];
  const ids = new Set(response.messages.map((m) => m.id).filter(Boolean));
  const replies: Reply[] = [];
  const waits = (filter: (a: (typeof actions)[number]) => boolean) => {
    for (const a of actions.filter(filter)) {
      const wait = waitOf(a);
      if (wait) replies.push(wait);
    }
  };
  waits((a) => !a.lastBubbleBlockId);
  for (const m of response.messages) {
    replies.push(...messageReplies(m));
    if (m.id) waits((a) => a.lastBubbleBlockId === m.id);
  }
  waits((a) => a.lastBubbleBlockId !== undefined && !ids.has(a.lastBubbleBlockId));
  const input = response.input ?? undefined;
  const choices = input ? choicesOf(input) : [];
  return {
    replies: input ? inputReplies(input, choices, replies) : replies,
    choices,
    ended: !input && !actions.some((a) => a.expectsDedicatedReply === true),
  };
}
