import { expect } from 'chai';
import { nextDelayMs } from '../../src/events/webhooks/retry-policy.js';
import { deliveryUrl, matches } from '../../src/events/webhooks/webhook-dispatcher.js';
import { parseRetryAfter } from '../../src/events/webhooks/webhook-sender.js';
import type { WebhookRecord } from '../../src/store/records.js';

const hook = (over: Partial<WebhookRecord> = {}): WebhookRecord => ({
  instanceId: 'i',
  label: 'default',
  enabled: true,
  url: 'https://hooks.example/wa/',
  authorizationSealed: undefined,
  byEvents: false,
  events: [],
  base64: false,
  createdAt: '',
  updatedAt: '',
  ...over,
});

describe('webhook policy', () => {
  it('backs off exponentially with equal jitter, capped, and honours a longer Retry-After', () => {
    const policy = { maxAttempts: 8, baseDelayMs: 1000, maxDelayMs: 10_000 };
    expect(nextDelayMs(policy, 1, undefined, () => 0)).to.equal(500);
    expect(nextDelayMs(policy, 1, undefined, () => 1)).to.equal(1000);
    expect(nextDelayMs(policy, 3, undefined, () => 1)).to.equal(4000);
    expect(nextDelayMs(policy, 10, undefined, () => 1)).to.equal(10_000);
    expect(nextDelayMs(policy, 1, 7000, () => 0)).to.equal(7000);
    expect(nextDelayMs(policy, 1, 60_000, () => 0)).to.equal(10_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('3')).to.equal(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4000)).to.equal(6000);
    expect(parseRetryAfter('soon')).to.equal(undefined);
    expect(parseRetryAfter(undefined)).to.equal(undefined);
  });

  it('matches enabled webhooks whose list is empty or names the event', () => {
    expect(matches(hook(), 'call.update')).to.equal(true);
    expect(matches(hook({ events: ['message.exchange'] }), 'call.update')).to.equal(false);
    expect(matches(hook({ events: ['call.update'] }), 'call.update')).to.equal(true);
    expect(matches(hook({ enabled: false }), 'call.update')).to.equal(false);
    // Enterprise events reach an instance webhook only when it lists them (spec section 6).
    expect(matches(hook(), 'enterprise.trial.started')).to.equal(false);
    expect(matches(hook({ events: ['enterprise.trial.started'] }), 'enterprise.trial.started')).to.equal(true);
  });

  it('appends the event name with byEvents', () => {
    expect(deliveryUrl(hook(), 'message.exchange')).to.equal('https://hooks.example/wa/');
    expect(deliveryUrl(hook({ byEvents: true }), 'message.exchange')).to.equal(
      'https://hooks.example/wa/message.exchange',
    );
    expect(deliveryUrl(hook({ byEvents: true, url: 'https://h.example/x?k=1' }), 'call.update')).to.equal(
      'https://h.example/x/call.update?k=1',
    );
  });
});
