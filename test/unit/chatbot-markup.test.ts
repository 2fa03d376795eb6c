import { expect } from 'chai';
import { EMPTY_BODY, markupMessages, parseMarkup } from '../../src/integrations/chatbot/markup-parser.js';
import type { ParsedMarkup } from '../../src/integrations/chatbot/markup-parser.js';

const none = { buttons: [], payments: [] };

describe('chatbot markup parser (spec 4.8)', () => {
  describe('each token type', () => {
    const cases: [string, string, ParsedMarkup][] = [
      [
        'reply button (the label is its id)',
        'Pick one [reply|Yes]',
        { text: 'Pick one', buttons: [{ type: 'reply', id: 'Yes', label: 'Yes' }], payments: [] },
      ],
      [
        'url button',
        'Docs [url:https://docs.example.com/a?b=1|Open docs]',
        {
          text: 'Docs',
          buttons: [{ type: 'url', url: 'https://docs.example.com/a?b=1', label: 'Open docs' }],
          payments: [],
        },
      ],
      [
        'call button (number normalised)',
        'Call us [call:+55 (11) 99999-0000|Call]',
        { text: 'Call us', buttons: [{ type: 'call', phoneNumber: '+5511999990000', label: 'Call' }], payments: [] },
      ],
      [
        'copy button',
        'Your code [copy:ABC-123|Copy code]',
        { text: 'Your code', buttons: [{ type: 'copy', code: 'ABC-123', label: 'Copy code' }], payments: [] },
      ],
      [
        'pix payment (label ignored, key type upper-cased)',
        'Pay here [pix:Acme Ltda;acme@example.com;email|Pay]',
        {
          text: 'Pay here',
          buttons: [],
          payments: [{ merchantName: 'Acme Ltda', key: 'acme@example.com', keyType: 'EMAIL' }],
        },
      ],
      [
        'pix with an empty label',
        '[pix:Acme;12345678900;CPF|]',
        { text: '', buttons: [], payments: [{ merchantName: 'Acme', key: '12345678900', keyType: 'CPF' }] },
      ],
      [
        'every pix key type: CNPJ',
        '[pix:A;1;CNPJ|x]',
        { text: '', buttons: [], payments: [{ merchantName: 'A', key: '1', keyType: 'CNPJ' }] },
      ],
      [
        'every pix key type: PHONE',
        '[pix:A;+5511;PHONE|x]',
        { text: '', buttons: [], payments: [{ merchantName: 'A', key: '+5511', keyType: 'PHONE' }] },
      ],
      [
        'every pix key type: RANDOM',
        '[pix:A;k-1;RANDOM|x]',
        { text: '', buttons: [], payments: [{ merchantName: 'A', key: 'k-1', keyType: 'RANDOM' }] },
      ],
      [
        'type names ignore case',
        '[Reply|Ok]',
        { text: '', buttons: [{ type: 'reply', id: 'Ok', label: 'Ok' }], payments: [] },
      ],
      [
        'labels and parameters are trimmed',
        '[url: https://x.example |  Go ]',
        { text: '', buttons: [{ type: 'url', url: 'https://x.example', label: 'Go' }], payments: [] },
      ],
      ['text without tokens is kept as is (trimmed)', '  Hello *there*  ', { text: 'Hello *there*', ...none }],
      ['bracketed text without | is not a token', 'See [note] and [1]', { text: 'See [note] and [1]', ...none }],
    ];
    for (const [name, input, expected] of cases) {
      it(name, () => expect(parseMarkup(input)).to.deep.equal(expected));
    }
  });

  describe('malformed tokens are dropped and the rest is sent', () => {
    const cases: [string, string][] = [
      ['unknown type', 'Hi [foo|Bar]'],
      ['unknown type with a parameter', 'Hi [foo:x|Bar]'],
      ['reply with a parameter', 'Hi [reply:x|Bar]'],
      ['reply without a label', 'Hi [reply|]'],
      ['reply with a blank label', 'Hi [reply|   ]'],
      ['url without a parameter', 'Hi [url|Open]'],
      ['url with an empty parameter', 'Hi [url:|Open]'],
      ['url that is not http(s)', 'Hi [url:ftp://x.example|Open]'],
      ['url that is not a URL', 'Hi [url:not a link|Open]'],
      ['url without a label', 'Hi [url:https://x.example|]'],
      ['call without a number', 'Hi [call:|Call]'],
      ['call with letters', 'Hi [call:CALLME|Call]'],
      ['call without a label', 'Hi [call:5511999990000|]'],
      ['copy without a code', 'Hi [copy|Copy]'],
      ['copy without a label', 'Hi [copy:X1|]'],
      ['pix without parameters', 'Hi [pix|Pay]'],
      ['pix with two parameters', 'Hi [pix:Acme;key|Pay]'],
      ['pix with four parameters', 'Hi [pix:Acme;key;CPF;extra|Pay]'],
      ['pix with an empty name', 'Hi [pix:;key;CPF|Pay]'],
      ['pix with an empty key', 'Hi [pix:Acme; ;CPF|Pay]'],
      ['pix with an unknown key type', 'Hi [pix:Acme;key;IBAN|Pay]'],
      ["';' inside a label", 'Hi [reply|a;b]'],
      ["';' inside a parameter", 'Hi [copy:a;b|Copy]'],
    ];
    for (const [name, input] of cases) {
      it(name, () => expect(parseMarkup(input)).to.deep.equal({ text: 'Hi', ...none }));
    }

    it('a malformed token among good ones drops only itself', () => {
      expect(parseMarkup('Choose [reply|A] [foo|B] [reply|C]')).to.deep.equal({
        text: 'Choose',
        buttons: [
          { type: 'reply', id: 'A', label: 'A' },
          { type: 'reply', id: 'C', label: 'C' },
        ],
        payments: [],
      });
    });

    it('a | or ] inside a label makes no token: the text stays', () => {
      expect(parseMarkup('x [reply|a|b] y')).to.deep.equal({ text: 'x [reply|a|b] y', ...none });
      expect(parseMarkup('x [reply|a]b] y').buttons).to.deep.equal([{ type: 'reply', id: 'a', label: 'a' }]);
    });
  });

  describe('the body around tokens', () => {
    it('keeps line breaks, removes lines that held only tokens and the spaces a token leaves', () => {
      const parsed = parseMarkup('Hello *Ana*,\nwhat now?\n[reply|Sales] [reply|Support]\n\nBye  [copy:X|Copy]  now');
      expect(parsed.text).to.equal('Hello *Ana*,\nwhat now?\n\nBye now');
      expect(parsed.buttons.map((b) => b.label)).to.deep.equal(['Sales', 'Support', 'Copy']);
    });
  });

  describe('messages: at most 3 buttons each, payments always apart', () => {
    it('a text alone is one text message', () => {
      expect(markupMessages(parseMarkup('just text'))).to.deep.equal([{ kind: 'text', text: 'just text' }]);
    });

    it('an empty bubble sends nothing', () => {
      expect(markupMessages(parseMarkup('  [foo|x] '))).to.deep.equal([]);
    });

    it('seven buttons go in groups of 3, 3 and 1; the text is the first body', () => {
      const labels = ['A', 'B', 'C', 'D', 'E', 'F', 'G'];
      const messages = markupMessages(parseMarkup(`Menu ${labels.map((l) => `[reply|${l}]`).join(' ')}`));
      expect(messages.map((m) => (m.kind === 'buttons' ? [m.text, m.buttons.map((b) => b.label)] : m))).to.deep.equal([
        ['Menu', ['A', 'B', 'C']],
        [EMPTY_BODY, ['D', 'E', 'F']],
        [EMPTY_BODY, ['G']],
      ]);
    });

    it('buttons without text get a body; payments follow as separate messages, in order', () => {
      const messages = markupMessages(parseMarkup('[url:https://a.example|Site][pix:A;k1;RANDOM|x][pix:B;k2;CPF|y]'));
      expect(messages).to.deep.equal([
        { kind: 'buttons', text: EMPTY_BODY, buttons: [{ type: 'url', url: 'https://a.example', label: 'Site' }] },
        { kind: 'payment', payment: { merchantName: 'A', key: 'k1', keyType: 'RANDOM' } },
        { kind: 'payment', payment: { merchantName: 'B', key: 'k2', keyType: 'CPF' } },
      ]);
    });

    it('a text with a payment and no buttons: the text, then the payment', () => {
      expect(markupMessages(parseMarkup('Total R$10 [pix:A;k;CPF|Pay]'))).to.deep.equal([
        { kind: 'text', text: 'Total R$10' },
        { kind: 'payment', payment: { merchantName: 'A', key: 'k', keyType: 'CPF' } },
      ]);
    });
  });
});
