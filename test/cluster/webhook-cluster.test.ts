import { expect } from 'chai';
import { Redis } from 'ioredis';
import { keys } from '../../src/redis/keys.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ClusterFixture, connectAndLink, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';

describe('cluster: webhook deliveries through Redis Streams', function () {
  this.timeout(90_000);
  let c: ClusterFixture;
  let receiver: WebhookReceiver;
  let redis: Redis;

  before(async function () {
    this.timeout(60_000);
    receiver = await WebhookReceiver.start();
    c = await ClusterFixture.start(2, {
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_LEASE_MS: '3000',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '500',
    });
    redis = new Redis(c.redis.url);
  });

  after(async () => {
    redis?.disconnect();
    await c?.stop();
    await receiver?.stop();
  });

  it('kill -9 of the node that was delivering loses nothing: another node delivers its pending entries', async () => {
    const api = c.nodes[0]!.api;
    const account = (await api.post('/api/admin/accounts', { name: 'hooks' }, { token: CLUSTER_ADMIN_TOKEN })).body
      .account.token as string;
    const created = await api.post(
      '/api/instance/new',
      { name: 'shop', webhookEnabled: true, webhookURL: receiver.url, webhookEvents: ['message.exchange'] },
      { token: account },
    );
    const token = created.body.instance.token as string;
    await connectAndLink(api, api, 'shop', token);

    // The receiver hangs: every delivery stays taken (pending in the stream) by whichever node took it.
    receiver.respond = () => 'hang';
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await c.nodes[i % 2]!.api.post(
        '/api/sandbox/inbound/shop',
        { from: '5511944440000', text: `order ${i}` },
        { token },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ids.push(res.body.messageId as string);
    }
    await sleep(500);
    const pending = (await redis.xpending(keys.webhookStream(), 'webhooks')) as [
      number,
      string,
      string,
      [string, string][] | null,
    ];
    expect(pending[0]).to.be.greaterThan(0);
    const [holder] = [...(pending[3] ?? [])].sort((a, b) => Number(b[1]) - Number(a[1]));
    const victim = c.nodes.find((n) => n.nodeId === holder![0])!;
    await victim.kill9();
    c.remove(victim);

    receiver.respond = () => ({ status: 200 });
    const deadline = Date.now() + 30_000;
    const got = () =>
      new Set(
        receiver
          .accepted()
          .filter((r) => r.body?.event === 'message.exchange')
          .map((r) => r.body.data.id as string),
      );
    while (!ids.every((id) => got().has(id)) && Date.now() < deadline) await sleep(100);
    expect([...got()].filter((id) => ids.includes(id)).sort()).to.deep.equal([...ids].sort());
    // Settled: nothing left in the stream, the retries or the dead letters.
    await sleep(500);
    expect(await redis.xlen(keys.webhookStream())).to.equal(0);
    expect(await redis.zcard(keys.webhookRetries())).to.equal(0);
  });
});
