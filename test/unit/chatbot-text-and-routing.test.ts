import { expect } from 'chai';
import { markdownToWhatsApp, richTextToWhatsApp } from '../../src/integrations/chatbot/rich-text.js';
import { matchesRegex } from '../../src/integrations/chatbot/safe-regex.js';
import { routeMessage } from '../../src/integrations/chatbot/trigger-router.js';
import type { RoutableBot } from '../../src/integrations/chatbot/trigger-router.js';

const p = (...children: unknown[]) => ({ type: 'p', children });

describe('chatbot rich text → WhatsApp formatting', () => {
  const cases: [string, unknown[], string][] = [
    [
      'marks',
      [
        p(
          { text: 'Hi ' },
          { text: 'Ana', bold: true },
          { text: ', ' },
          { text: 'welcome', italic: true },
          { text: ' ' },
          { text: 'old', strikethrough: true },
        ),
      ],
      'Hi *Ana*, _welcome_ ~old~',
    ],
    [
      'markers hug the text, spaces stay outside',
      [p({ text: 'a' }, { text: ' bold ', bold: true }, { text: 'b' })],
      'a *bold* b',
    ],
    [
      'neighbouring leaves with the same marks are one run',
      [p({ text: 'Hel', bold: true }, { text: 'lo', bold: true })],
      '*Hello*',
    ],
    ['bold and italic together', [p({ text: 'both', bold: true, italic: true })], '_*both*_'],
    ['underline has no WhatsApp form', [p({ text: 'u', underline: true })], 'u'],
    ['code', [p({ text: 'x = 1', code: true })], '`x = 1`'],
    [
      'paragraphs are lines; an empty paragraph is a blank line',
      [p({ text: 'one' }), p({ text: '' }), p({ text: 'two' })],
      'one\n\ntwo',
    ],
    [
      'a link with a label',
      [p({ text: 'See ' }, { type: 'a', url: 'https://x.example', children: [{ text: 'docs' }] })],
      'See docs (https://x.example)',
    ],
    [
      'a link whose label is its URL',
      [p({ type: 'a', url: 'https://x.example', children: [{ text: 'https://x.example' }] })],
      'https://x.example',
    ],
    [
      'ordered and bulleted lists (Plate li/lic), nested',
      [
        {
          type: 'ol',
          children: [
            { type: 'li', children: [{ type: 'lic', children: [{ text: 'first' }] }] },
            {
              type: 'li',
              children: [
                { type: 'lic', children: [{ text: 'second' }] },
                { type: 'ul', children: [{ type: 'li', children: [{ type: 'lic', children: [{ text: 'inner' }] }] }] },
              ],
            },
          ],
        },
      ],
      '1. first\n2. second\n  - inner',
    ],
    [
      'inline variables are their text',
      [p({ text: 'Hi ' }, { type: 'inline-variable', children: [{ text: 'Ana' }] })],
      'Hi Ana',
    ],
    [
      'markup survives untouched',
      [p({ text: 'Pick [reply|Yes] [url:https://a.example|Go]' })],
      'Pick [reply|Yes] [url:https://a.example|Go]',
    ],
  ];
  for (const [name, input, expected] of cases) it(name, () => expect(richTextToWhatsApp(input)).to.equal(expected));
});

describe('chatbot markdown → WhatsApp formatting', () => {
  const cases: [string, string, string][] = [
    ['bold, italic, strike', 'Hi **Ana**, *welcome* _again_ ~~old~~', 'Hi *Ana*, _welcome_ _again_ ~old~'],
    ['__bold__', '__strong__', '*strong*'],
    [
      'links',
      'See [docs](https://x.example) or <https://y.example>',
      'See docs (https://x.example) or <https://y.example>',
    ],
    ['bullets and numbers', '* one\n- two\n1. three', '- one\n- two\n1. three'],
    ['headings become bold', '## Title', '*Title*'],
    [
      'escapes come out plain (markup survives)',
      'Pick \\[reply\\|Yes\\] now \\*not bold\\*',
      'Pick [reply|Yes] now *not bold*',
    ],
    ['inline code is kept', 'run `a **b**`', 'run `a **b**`'],
  ];
  for (const [name, input, expected] of cases) it(name, () => expect(markdownToWhatsApp(input)).to.equal(expected));
});

describe('chatbot trigger routing (spec 4.8 priority)', () => {
  let seq = 0;
  const bot = (botId: string, fields: Partial<RoutableBot> = {}): RoutableBot => ({
    botId,
    enabled: true,
    triggerType: 'keyword',
    triggerOperator: 'equals',
    triggerValue: 'x',
    ignoreGroups: true,
    fallback: false,
    createdAt: `2026-01-01T00:00:${String(++seq).padStart(2, '0')}.000Z`,
    ...fields,
  });
  const kw = (
    botId: string,
    triggerOperator: RoutableBot['triggerOperator'],
    triggerValue: string,
    extra: Partial<RoutableBot> = {},
  ) => bot(botId, { triggerOperator, triggerValue, ...extra });
  const all = bot('all', { triggerType: 'all', triggerOperator: undefined, triggerValue: undefined });
  const fallback = kw('fallback', 'equals', 'never-typed', { fallback: true });
  const bots = [
    all,
    fallback,
    kw('regex', 'regex', '^order #?\\d+$'),
    kw('contains', 'contains', 'order'),
    kw('ends', 'endsWith', 'please'),
    kw('starts', 'startsWith', 'order'),
    kw('equals', 'equals', 'Order 42'),
  ];
  const route = (text: string, list = bots, isGroup = false) => routeMessage(list, text, isGroup)?.botId;

  it('equals beats everything, ignoring case and spaces', () => expect(route('  order 42 ')).to.equal('equals'));
  it('startsWith/endsWith beat contains', () => {
    expect(route('order 43')).to.equal('starts');
    expect(route('help me please')).to.equal('ends');
  });
  it('contains beats regex', () => expect(route('my order')).to.equal('contains'));
  it('regex beats all', () =>
    expect(
      route(
        'ORDER #7',
        bots.filter((b) => !['starts', 'contains'].includes(b.botId)),
      ),
    ).to.equal('regex'));
  it('all beats the fallback', () => expect(route('hello')).to.equal('all'));
  it('the fallback answers when nothing else matches', () =>
    expect(
      route(
        'hello',
        bots.filter((b) => b.botId !== 'all'),
      ),
    ).to.equal('fallback'));
  it('nothing without an all or fallback bot', () =>
    expect(
      route(
        'hello',
        bots.filter((b) => !['all', 'fallback'].includes(b.botId)),
      ),
    ).to.equal(undefined));
  it('disabled bots never answer', () =>
    expect(route('order 42', [kw('equals', 'equals', 'order 42', { enabled: false })])).to.equal(undefined));
  it('bots that ignore groups skip group messages', () => {
    const list = [kw('g', 'contains', 'hi', { ignoreGroups: false }), kw('p', 'equals', 'hi')];
    expect(route('hi', list, true)).to.equal('g');
    expect(route('hi', list, false)).to.equal('p');
  });
  it('within a tier the longest trigger wins, then the oldest', () => {
    expect(route('order pizza', [kw('short', 'startsWith', 'or'), kw('long', 'startsWith', 'order p')])).to.equal(
      'long',
    );
    expect(route('abc', [kw('first', 'contains', 'b'), kw('second', 'contains', 'c')])).to.equal('first');
  });
  it('a regex that runs out of time is no match, and says so', () => {
    const slow = kw('slow', 'regex', '(a|a)*b');
    const timedOut: string[] = [];
    expect(
      routeMessage([slow, all], 'a'.repeat(40), false, { onTimeout: (b) => timedOut.push(b.botId) })?.botId,
    ).to.equal('all');
    expect(timedOut).to.deep.equal(['slow']);
  });
  it('matchesRegex: case-insensitive, invalid patterns never match', () => {
    expect(matchesRegex('^hello', 'HELLO there')).to.equal(true);
    expect(matchesRegex('(', 'x')).to.equal(false);
  });
});
