import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { SecretBox } from '../../src/security/secret-box.js';
import {
  newWebhookSecret,
  ROTATION_OVERLAP_MS,
  signingSecrets,
  standardHeaders,
  standardSignature,
} from '../../src/events/webhooks/webhook-signature.js';
import type { WebhookRecord } from '../../src/store/records.js';
import { verifyStandardWebhook } from '../helpers/standard-webhooks.js';

describe('Standard Webhooks signatures', () => {
  const box = new SecretBox(randomBytes(32));

  it("matches the specification's example", () => {
    expect(
      standardSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).to.equal('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('makes whsec_ secrets of 32 random bytes, sealed for the store', () => {
    const { secret, sealed } = newWebhookSecret(box);
    expect(secret).to.match(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), 'base64')).to.have.length(32);
    expect(sealed).not.to.include(secret.slice(6));
    expect(newWebhookSecret(box).secret).not.to.equal(secret);
  });

  it('signs with both secrets during a rotation, and with the new one only after 24 h', () => {
    const old = newWebhookSecret(box);
    const current = newWebhookSecret(box);
    const rotatedAt = Date.parse('2026-11-26T12:00:00Z');
    const webhook: WebhookRecord = {
      instanceId: 'i',
      label: 'default',
      enabled: true,
      url: 'https://example.com/',
      authorizationSealed: undefined,
      byEvents: false,
      events: [],
      base64: false,
      secretSealed: current.sealed,
      previousSecretSealed: old.sealed,
      previousSecretUntil: new Date(rotatedAt + ROTATION_OVERLAP_MS).toISOString(),
      createdAt: '',
      updatedAt: '',
    };
    expect(signingSecrets(webhook, box, rotatedAt + 1000)).to.deep.equal([current.secret, old.secret]);
    expect(signingSecrets(webhook, box, rotatedAt + ROTATION_OVERLAP_MS)).to.deep.equal([current.secret]);

    const body = '{"event":"message.exchange"}';
    const now = Date.now();
    const headers = standardHeaders(signingSecrets(webhook, box, rotatedAt + 1000), 'evt-1', body, now);
    expect(headers['webhook-id']).to.equal('evt-1');
    expect(headers['webhook-timestamp']).to.equal(String(Math.floor(now / 1000)));
    expect(headers['webhook-signature']!.split(' ')).to.have.length(2);
    const received = { path: '/', headers, body: JSON.parse(body), raw: body, at: now };
    expect(verifyStandardWebhook(received, old.secret)).to.equal(true);
    expect(verifyStandardWebhook(received, current.secret)).to.equal(true);
    expect(verifyStandardWebhook(received, newWebhookSecret(box).secret)).to.equal(false);
    expect(verifyStandardWebhook({ ...received, raw: `${body} ` }, current.secret)).to.equal(false);
    expect(verifyStandardWebhook(received, current.secret, Math.floor(now / 1000) + 600)).to.equal(false);
  });
});
