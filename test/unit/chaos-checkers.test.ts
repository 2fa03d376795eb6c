import { expect } from 'chai';
import type { OwnerRecord } from '../../src/actors/test-probe.js';
import type { DueEvent } from '../../src/billing/billing-plan.js';
import {
  checkAvailability,
  checkBilling,
  checkCallRejections,
  checkChatbotReplies,
  checkChatbotUnanswered,
  checkConfigChanges,
  checkDecryptFailures,
  checkLostEvents,
  checkStreamDuplicates,
  checkLostWrites,
  checkSends,
} from '../chaos/checkers.js';
import { History } from '../chaos/history.js';
import { checkWebSockets } from '../chaos/subscribers.js';
import { twoOwners } from '../cluster/probe-checker.js';
import type { Received } from '../helpers/webhook-receiver.js';

const owner = (node: string, epoch: number, at: number): OwnerRecord => ({
  kind: 'owner',
  instance: 'i1',
  node,
  epoch,
  at,
});

describe('the two-owners checker', () => {
  it('finds an old owner that still held itself the owner after the new one began', () => {
    const found = twoOwners([owner('n1', 1, 100), owner('n1', 1, 200), owner('n2', 2, 150), owner('n2', 2, 300)]);
    expect(found).to.have.length(1);
    expect(found[0]!.old).to.deep.include({ node: 'n1', epoch: 1, at: 200 });
    expect(found[0]!.newer).to.deep.include({ node: 'n2', epoch: 2, at: 150 });
  });

  it('accepts a handoff: the old owner stops before the new one begins, and ownership may come back later', () => {
    const records = [owner('n1', 1, 100), owner('n1', 1, 190), owner('n2', 2, 200), owner('n1', 3, 400)];
    expect(twoOwners(records)).to.deep.equal([]);
  });

  it('keeps instances apart', () => {
    expect(twoOwners([owner('n1', 1, 300), { ...owner('n2', 2, 100), instance: 'i2' }])).to.deep.equal([]);
  });
});

describe('the billing checker', () => {
  const due = (event: string, data: Record<string, unknown>): DueEvent => ({
    key: `${event}:${String(data.instance ?? data.periodStart)}`,
    accountId: 'a',
    event,
    description: '',
    data,
  });
  const delivery = (id: string, event: string, data: Record<string, unknown>) =>
    ({ headers: { 'x-switchboard-delivery': id }, body: { event, data } }) as unknown as Received;

  it('counts an event emitted under two delivery ids, and a due one never delivered', () => {
    const [twice, missing] = checkBilling(
      [
        due('enterprise.trial.started', { instance: 'one' }),
        due('enterprise.cycle.renewed', { periodStart: '2026-01-01T00:00:00.000Z' }),
      ],
      [
        delivery('d1', 'enterprise.trial.started', { instance: 'one' }),
        delivery('d1', 'enterprise.trial.started', { instance: 'one' }),
        delivery('d2', 'enterprise.trial.started', { instance: 'one' }),
      ],
    );
    expect(twice!.anomalies).to.equal(1);
    expect(missing!.anomalies).to.equal(1);
    expect(missing!.examples[0]).to.match(/enterprise\.cycle\.renewed/);
  });

  it('a redelivery under the same id is no duplicate', () => {
    const [twice, missing] = checkBilling(
      [due('enterprise.trial.started', { instance: 'one' })],
      [
        delivery('d1', 'enterprise.trial.started', { instance: 'one' }),
        delivery('d1', 'enterprise.trial.started', { instance: 'one' }),
      ],
    );
    expect(twice!.anomalies + missing!.anomalies).to.equal(0);
  });
});

describe('the WebSocket checker', () => {
  it('counts an event twice on one connection and an event of another instance, not one seen on two connections', () => {
    const verdict = checkWebSockets([
      { instance: 'a', node: 'n1', events: ['message.exchange|m1', 'message.exchange|m1'], foreign: [] },
      { instance: 'a', node: 'n2', events: ['message.exchange|m1'], foreign: ['message.exchange of b'] },
    ]);
    expect(verdict.anomalies).to.equal(2);
  });
});

describe('the chatbot checker', () => {
  it('counts a question answered twice, not one left unanswered', () => {
    const history = new History();
    for (const text of ['question-1', 'question-2', 'question-3']) {
      history.ok(history.invoke('client-0', 'chat', { instance: 'bot', text }));
    }
    const verdict = checkChatbotReplies(history, ['echo question-1', 'echo question-2', 'echo question-2']);
    expect(verdict.anomalies).to.equal(1);
    expect(verdict.examples[0]).to.match(/question-2.*answered 2 times/);
  });

  it('counts a question handed over to the bot and never answered, not one the network never handed over', () => {
    const history = new History();
    for (const text of ['question-1', 'question-2', 'question-3']) {
      history.ok(history.invoke('client-0', 'chat', { instance: 'bot', text }));
    }
    const verdict = checkChatbotUnanswered(history, new Set(['question-1', 'question-2']), ['echo question-1']);
    expect(verdict.anomalies).to.equal(1);
    expect(verdict.examples[0]).to.match(/question-2.*never answered/);
  });
});

describe('the call checker', () => {
  it('counts a call rejected twice and an acknowledged call never rejected', () => {
    const acknowledged = new Map([['a', new Set(['C1', 'C2'])]]);
    const [twice, missing] = checkCallRejections(acknowledged, new Map([['a', ['C1', 'C1']]]));
    expect(twice!.anomalies).to.equal(1);
    expect(missing!.anomalies).to.equal(1);
    expect(missing!.examples[0]).to.match(/C2/);
    const timelines = new Map([['C2', 'acked by c4 +0.10 s; rejected by c4/n1 +46.00 s (ignored: the call was over)']]);
    const [, explained] = checkCallRejections(acknowledged, new Map([['a', ['C1']]]), timelines);
    expect(explained!.examples[0]).to.include('C2 acknowledged, never rejected (acked by c4 +0.10 s;');
  });
});

describe('the configuration checker', () => {
  /** A history whose operations happen at the given times (ms since the run began). */
  function history(
    ops: {
      kind: string;
      fields: Record<string, unknown>;
      outcome: 'ok' | 'fail' | 'info';
      start: number;
      end: number;
    }[],
  ) {
    const h = new History();
    for (const o of ops) {
      const op = h.invoke('c', o.kind, o.fields);
      h[o.outcome](op);
      op.start = o.start;
      op.end = o.end;
    }
    return h;
  }
  const change = (target: string | null, start: number, end: number, outcome: 'ok' | 'fail' | 'info' = 'ok') => ({
    kind: 'webhook',
    fields: { instance: 'i', target },
    outcome,
    start,
    end,
  });
  const inbound = (text: string, start: number) => ({
    kind: 'inbound',
    fields: { instance: 'i', text },
    outcome: 'ok' as const,
    start,
    end: start + 5,
  });
  const emitted = new Map([['i', new Set(['m1', 'm2', 'm3'])]]);

  it('finds an event sent after a change was acknowledged and delivered under the configuration before it', () => {
    const h = history([change('/cfg-1', 10, 20), inbound('m1', 30)]);
    const v = checkConfigChanges(h, [{ instance: 'i', text: 'm1', path: '/cfg-0' }], emitted, '/cfg-0');
    expect(v.anomalies).to.equal(1);
    expect(v.examples[0]).to.contain('delivered to /cfg-0');
  });

  it('finds an event emitted under a configuration that takes it, never delivered there', () => {
    const h = history([change('/cfg-1', 10, 20), inbound('m1', 30)]);
    expect(checkConfigChanges(h, [], emitted, '/cfg-0').anomalies).to.equal(1);
  });

  it('accepts the old target for an event sent before the answer, a later change, an unknown one, and a removal', () => {
    const h = history([
      inbound('m1', 5),
      change('/cfg-1', 10, 20),
      change('/cfg-2', 40, 50, 'info'),
      inbound('m2', 30),
      change(null, 60, 70),
      inbound('m3', 80),
    ]);
    const deliveries = [
      { instance: 'i', text: 'm1', path: '/cfg-0' },
      { instance: 'i', text: 'm1', path: '/cfg-1' },
      { instance: 'i', text: 'm2', path: '/cfg-2' },
    ];
    expect(checkConfigChanges(h, deliveries, emitted, '/cfg-0')).to.deep.include({ anomalies: 0 });
  });

  it('holds a refused change to nothing: the configuration before it still applies', () => {
    const h = history([change('/cfg-1', 10, 20), change('/cfg-2', 25, 28, 'fail'), inbound('m1', 30)]);
    const v = checkConfigChanges(h, [{ instance: 'i', text: 'm1', path: '/cfg-2' }], emitted, '/cfg-0');
    expect(v.anomalies).to.equal(1);
  });
});

describe('the send, inbound, write and availability checkers', () => {
  it('counts a key that reached the network under two ids, and an acknowledged one that never did', () => {
    const h = new History();
    h.ok(h.invoke('c', 'send', { instance: 'i', key: 'k1' }));
    h.ok(h.invoke('c', 'send', { instance: 'i', key: 'k2' }));
    h.info(h.invoke('c', 'send', { instance: 'i', key: 'k3' }));
    const sent = new Map([['i', new Map([['k1', new Set(['m1', 'm2'])]])]]);
    const [twice, lost] = checkSends(h, sent);
    expect(twice!.anomalies).to.equal(1);
    expect(lost!.anomalies, 'k2 acknowledged and lost; k3 unknown may be missing').to.equal(1);
  });

  it('counts an inbound message handed to the instance that never reached the webhook', () => {
    const h = new History();
    h.ok(h.invoke('c', 'inbound', { instance: 'i', text: 'a' }));
    h.ok(h.invoke('c', 'inbound', { instance: 'i', text: 'b' }));
    h.ok(h.invoke('c', 'inbound', { instance: 'i', text: 'c' }));
    const handed = new Map([['i', new Set(['a', 'b'])]]);
    const received = new Map([['i', new Set(['a'])]]);
    const v = checkLostEvents(h, handed, received);
    expect(v.anomalies, 'b lost; c never handed over').to.equal(1);
    const stream = checkLostEvents(h, handed, new Map([['i', new Set(['b'])]]), 'NATS stream');
    expect(stream.checker).to.equal('lost inbound (NATS stream)');
    expect(stream.examples).to.have.length(1);
    expect(stream.examples[0]).to.contain('"text":"a"').and.contain('no message.exchange at the NATS stream');
  });

  it('counts a message whose event the deduplicating stream holds twice', () => {
    const v = checkStreamDuplicates(
      new Map([
        ['M1', 1],
        ['M2', 2],
      ]),
    );
    expect(v.anomalies).to.equal(1);
    expect(v.examples).to.deep.equal(['message M2: 2 events in the NATS stream']);
    expect(checkStreamDuplicates(new Map([['M1', 1]])).anomalies).to.equal(0);
  });

  it('counts a final value that is neither the last acknowledged write nor an unknown one', () => {
    const h = new History();
    const first = h.invoke('c', 'settings', { instance: 'i', value: 'v1' });
    h.ok(first);
    const second = h.invoke('c', 'settings', { instance: 'i', value: 'v2' });
    h.ok(second);
    second.end = first.end! + 10;
    h.fail(h.invoke('c', 'settings', { instance: 'i', value: 'v3' }));
    expect(checkLostWrites(h, new Map([['i', 'v1']])).anomalies).to.equal(1);
    expect(checkLostWrites(h, new Map([['i', 'v3']])).anomalies).to.equal(1);
    expect(checkLostWrites(h, new Map([['i', 'v2']])).anomalies).to.equal(0);
  });

  it('counts instances not back within the limit, and a recovery slower than it', () => {
    expect(checkAvailability(['i1'], 1000, 5000).anomalies).to.equal(1);
    expect(checkAvailability([], 6000, 5000).anomalies).to.equal(1);
    expect(checkAvailability([], 4000, 5000).anomalies).to.equal(0);
  });

  it('counts a failure nothing repaired, and a companion retry only when its message never reached the webhook', () => {
    const retries = [
      { id: 'M1', line: "i1's companion could not decrypt M1" },
      { id: 'M2', line: "i1's companion could not decrypt M2" },
    ];
    const verdict = checkDecryptFailures(['contact could not decrypt M3'], retries, new Set(['M1']));
    expect(verdict.anomalies).to.equal(2);
    expect(verdict.examples).to.deep.equal([
      'contact could not decrypt M3',
      "i1's companion could not decrypt M2, never at the webhook",
    ]);
    expect(checkDecryptFailures([], retries, new Set(['M1', 'M2'])).anomalies).to.equal(0);
  });
});
