import { expect } from 'chai';
import { ValidationError } from '../../src/errors.js';
import { MAX_WAIT_SECONDS, flowStep } from '../../src/integrations/chatbot/flow-replies.js';
import { TypebotClient, TypebotRequestError, flowAddress } from '../../src/integrations/chatbot/typebot-client.js';
import type { TypebotResponse } from '../../src/integrations/chatbot/typebot-client.js';

const bubble = (id: string, value: string) => ({
  id,
  type: 'text',
  content: { type: 'richText', richText: [{ type: 'p', children: [{ text: value }] }] },
});
const response = (r: Partial<TypebotResponse>): TypebotResponse => ({ messages: [], ...r });

describe('chatbot flow answers → replies', () => {
  it('orders waits: unattached first, then each after its bubble, unknown bubbles last; caps their length', () => {
    const step = flowStep(
      response({
        messages: [bubble('a', 'A'), bubble('b', 'B')],
        clientSideActions: [
          { type: 'wait', wait: { secondsToWaitFor: 2 }, lastBubbleBlockId: 'a' },
          { type: 'wait', wait: { secondsToWaitFor: 600 } },
          { type: 'wait', wait: { secondsToWaitFor: '1' }, lastBubbleBlockId: 'gone' },
          { type: 'setVariable' },
        ],
      }),
    );
    expect(step.replies).to.deep.equal([
      { kind: 'wait', seconds: MAX_WAIT_SECONDS, dedicated: false },
      { kind: 'text', text: 'A' },
      { kind: 'wait', seconds: 2, dedicated: false },
      { kind: 'text', text: 'B' },
      { kind: 'wait', seconds: 1, dedicated: false },
    ]);
    expect(step.ended).to.equal(true);
  });

  it('a choice input becomes reply buttons (ids = item ids) in groups of 3, the last text their body', () => {
    const items = ['One', 'Two', 'Three', 'Four'].map((content, i) => ({ id: `i${i}`, content }));
    const step = flowStep(
      response({
        messages: [bubble('a', 'Intro'), bubble('b', 'Pick one')],
        input: { id: 'in', type: 'choice input', items },
      }),
    );
    expect(step.replies).to.deep.equal([
      { kind: 'text', text: 'Intro' },
      {
        kind: 'buttons',
        text: 'Pick one',
        buttons: items.slice(0, 3).map((i) => ({ type: 'reply', id: i.id, label: i.content })),
      },
      { kind: 'buttons', text: '…', buttons: [{ type: 'reply', id: 'i3', label: 'Four' }] },
    ]);
    expect(step.choices).to.deep.equal(items.map((i) => ({ id: i.id, label: i.content })));
    expect(step.ended).to.equal(false);
  });

  it('a multiple choice is a numbered list; a picture choice uses titles', () => {
    const multi = flowStep(
      response({
        input: {
          id: 'in',
          type: 'choice input',
          items: [
            { id: 'x', content: 'X' },
            { id: 'y', content: 'Y' },
          ],
          options: { isMultipleChoice: true },
        },
      }),
    );
    expect(multi.replies).to.deep.equal([{ kind: 'text', text: '1. X\n2. Y' }]);
    const pictures = flowStep(
      response({ input: { id: 'in', type: 'picture choice input', items: [{ id: 'p1', title: 'Red' }] } }),
    );
    expect(pictures.replies).to.deep.equal([
      { kind: 'buttons', text: '…', buttons: [{ type: 'reply', id: 'p1', label: 'Red' }] },
    ]);
  });

  it('media bubbles: images, audio and direct videos by URL; hosted videos as links; embeds dropped', () => {
    const step = flowStep(
      response({
        messages: [
          { id: '1', type: 'image', content: { url: 'https://cdn.example/a.png' } },
          { id: '2', type: 'audio', content: { url: 'https://cdn.example/a.mp3' } },
          { id: '3', type: 'video', content: { url: 'https://cdn.example/a.mp4', type: 'url' } },
          { id: '4', type: 'video', content: { type: 'youtube', id: 'abc' } },
          { id: '5', type: 'video', content: { url: 'https://vimeo.com/1', type: 'vimeo', id: '1' } },
          { id: '6', type: 'embed', content: { url: 'https://x.example', height: 400 } },
          { id: '7', type: 'image', content: { url: 'javascript:alert(1)' } },
        ],
      }),
    );
    expect(step.replies).to.deep.equal([
      { kind: 'media', media: 'image', url: 'https://cdn.example/a.png' },
      { kind: 'media', media: 'audio', url: 'https://cdn.example/a.mp3' },
      { kind: 'media', media: 'video', url: 'https://cdn.example/a.mp4' },
      { kind: 'text', text: 'https://www.youtube.com/watch?v=abc' },
      { kind: 'text', text: 'https://vimeo.com/1' },
    ]);
  });

  it('markdown bubbles are converted too, with their markup', () => {
    const step = flowStep(
      response({
        messages: [{ id: 'm', type: 'text', content: { type: 'markdown', markdown: 'Hi **Ana** \\[reply\\|Yes\\]' } }],
      }),
    );
    expect(step.replies).to.deep.equal([
      { kind: 'buttons', text: 'Hi *Ana*', buttons: [{ type: 'reply', id: 'Yes', label: 'Yes' }] },
    ]);
  });

  it('the flow has ended only without an input and without a wait that expects a dedicated reply', () => {
    expect(flowStep(response({})).ended).to.equal(true);
    expect(flowStep(response({ input: { id: 'i', type: 'text input' } })).ended).to.equal(false);
    const paused = flowStep(
      response({ clientSideActions: [{ type: 'wait', wait: { secondsToWaitFor: 1 }, expectsDedicatedReply: true }] }),
    );
    expect(paused.ended).to.equal(false);
    expect(paused.replies).to.deep.equal([{ kind: 'wait', seconds: 1, dedicated: true }]);
  });
});

describe('Typebot client', () => {
  it('splits a viewer URL into the base and the public id (last path segment)', () => {
    expect(flowAddress('https://viewer.example.com/my-bot')).to.deep.equal({
      base: 'https://viewer.example.com',
      publicId: 'my-bot',
    });
    expect(flowAddress('https://example.com/typebot/my%20bot/')).to.deep.equal({
      base: 'https://example.com/typebot',
      publicId: 'my bot',
    });
    expect(() => flowAddress('https://viewer.example.com/')).to.throw(ValidationError);
  });

  it('refuses private addresses unless allowed', async () => {
    const client = new TypebotClient({ timeoutMs: 1000, allowPrivateUrls: false });
    const err = await client.startChat('http://127.0.0.1:9/flow', { prefilledVariables: {} }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TypebotRequestError);
    expect((err as Error).message).to.equal(
      'Chatbot flow call failed: URL refused: URLs pointing to internal networks are not allowed',
    );
  });
});
