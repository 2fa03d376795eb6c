import { expect } from 'chai';
import type { OwnerRecord } from '../../src/actors/test-probe.js';
import type { DueEvent } from '../../src/billing/billing-plan.js';
import { checkBilling, checkCallRejections, checkChatbotReplies } from '../chaos/checkers.js';
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
});

describe('the call checker', () => {
  it('counts a call rejected twice and an acknowledged call never rejected', () => {
    const history = new History();
    history.ok(history.invoke('client-0', 'call', { instance: 'a' }), 'C1');
    history.ok(history.invoke('client-0', 'call', { instance: 'a' }), 'C2');
    history.info(history.invoke('client-0', 'call', { instance: 'a' }), 'no answer');
    const [twice, missing] = checkCallRejections(history, new Map([['a', ['C1', 'C1']]]));
    expect(twice!.anomalies).to.equal(1);
    expect(missing!.anomalies).to.equal(1);
    expect(missing!.examples[0]).to.match(/C2/);
  });
});
