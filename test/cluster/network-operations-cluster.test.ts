import { expect } from 'chai';
import sharp from 'sharp';
import { pngImage, startFileServer } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { ClusterFixture, connectAndLink } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';

describe('cluster: network operations sent to a node that does not own the instance', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let server: FileServer;
  let account: string;
  let owner: NodeProcess;
  let front: NodeProcess;

  before(async function () {
    this.timeout(60_000);
    // Nodes may fetch from the local test server; the URL checks themselves are covered elsewhere.
    [c, server] = await Promise.all([
      ClusterFixture.start(2, {
        RATE_LIMIT_PER_MINUTE: '100000',
        RATE_LIMIT_CREATE_PER_MINUTE: '1000',
        ALLOW_PRIVATE_URLS: 'true',
      }),
      startFileServer(),
    ]);
    server.serve('/photo.png', await pngImage(1280, 960, '#228833'), 'image/png');
    const created = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'netops' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    account = created.body.account.token as string;
    expect((await c.nodes[0]!.api.post('/api/instance/new', { name: 'shop' }, { token: account })).status).to.equal(
      201,
    );
    await connectAndLink(c.nodes[0]!.api, c.nodes[0]!.api, 'shop', account, { number: '5511900000001' });
    const accountId = (await c.store.accounts.findByName('netops'))!.id;
    const id = (await c.store.instances.findByName(accountId, 'shop'))!.id;
    const [ownerId] = await c.owners([id]);
    owner = c.nodes.find((n) => n.nodeId === ownerId)!;
    front = c.other(owner);
  });

  after(async () => {
    await Promise.all([c?.stop(), server?.close()]);
  });

  it('group list, privacy, profile and status answer through the non-owner exactly as the owner runs them', async () => {
    expect(front.nodeId).not.to.equal(owner.nodeId);
    const group = await front.api.post(
      '/api/sandbox/group/shop',
      { subject: 'Buyers', participants: [{ number: '5511900000002', admin: true }] },
      { token: account },
    );
    expect(group.status, group.text).to.equal(201);
    const groups = await front.api.get('/api/group/list/shop?includeMembers=true', { token: account });
    expect(groups.status, groups.text).to.equal(200);
    expect(groups.body.meta.total).to.equal(1);
    expect(groups.body.groups[0]).to.deep.include({ name: 'Buyers', memberCount: 2 });
    expect(groups.body.groups[0].members[1]).to.deep.equal({
      jid: '5511900000002@s.whatsapp.net',
      isAdmin: true,
      isSuperAdmin: false,
    });

    const privacy = await front.api.post(
      '/api/profile/privacy/shop',
      { privacy: { readReceipts: 'none' } },
      { token: account },
    );
    expect(privacy.status, privacy.text).to.equal(200);
    expect(privacy.body.settings.privacy).to.deep.equal({ readReceipts: 'none' });
    expect((await owner.api.get('/api/profile/getPrivacy/shop', { token: account })).body.settings).to.deep.equal(
      privacy.body.settings,
    );

    const profile = await front.api.post(
      '/api/profile/account/shop',
      { profilePicture: server.url('/photo.png'), profileName: 'Shop' },
      { token: account },
    );
    expect(profile.status, profile.text).to.equal(200);
    expect(profile.body.updatedFields).to.deep.equal(['profilePicture', 'profileName']);
    const held = (await owner.api.get('/api/sandbox/profile/shop', { token: account })).body.profile;
    expect(await sharp(Buffer.from(held.picture, 'base64')).metadata()).to.include({
      format: 'jpeg',
      width: 640,
      height: 480,
    });

    // Media crosses the wire as base64: the owner publishes what the front node downloaded and converted.
    const status = await front.api.post(
      '/api/message/status/shop',
      { type: 'image', message: 'new stock', mediaUrl: server.url('/photo.png') },
      { token: account },
    );
    expect(status.status, status.text).to.equal(200);
    expect(status.body.data.sender).to.deep.equal({ jid: '5511900000001@s.whatsapp.net', instance: 'shop' });
    const outbox = (await owner.api.get('/api/sandbox/outbox/shop?to=status@broadcast', { token: account })).body
      .messages;
    expect(outbox.at(-1)).to.deep.include({ messageId: status.body.data.messageId, type: 'status' });
    expect(outbox.at(-1).media).to.deep.include({ kind: 'image', mimetype: 'image/jpeg' });

    const history = await front.api.get('/api/chat/history/shop?chat=status@broadcast', { token: account });
    expect(history.body.messages.map((m: { id: string }) => m.id)).to.include(status.body.data.messageId);
  });

  it('the owner’s errors keep their status, message and code across nodes', async () => {
    await owner.api.post(
      '/api/sandbox/fault/shop',
      { operation: 'publishStatus', message: 'stanza rejected' },
      { token: account },
    );
    const failed = await front.api.post('/api/message/status/shop', { type: 'text', message: 'x' }, { token: account });
    expect(failed.status, failed.text).to.equal(500);
    expect(failed.body.error).to.deep.equal({ message: 'Failed to send status: stanza rejected', code: 'send_failed' });
    const invalid = await front.api.post(
      '/api/profile/privacy/shop',
      { visibility: { lastSeen: 'x' } },
      { token: account },
    );
    expect(invalid.status).to.equal(400);
    await owner.api.post(
      '/api/sandbox/fault/shop',
      { operation: 'setPrivacy:lastSeen', message: 'timed out' },
      { token: account },
    );
    const privacy = await front.api.post(
      '/api/profile/privacy/shop',
      { visibility: { lastSeen: 'none' } },
      { token: account },
    );
    expect(privacy.status, privacy.text).to.equal(500);
    expect(privacy.body.error.message).to.equal('failed to update lastSeen privacy: timed out');
  });
});
