import { expect } from 'chai';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const NOT_CONNECTED = 'Instance is not connected to WhatsApp';
const VISIBILITY = 'all, contacts, contact_blacklist, none';

describe('network operations: groups and privacy (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let token: string;
  let idle: string;

  before(async () => {
    n = await startNetworkNode();
    token = await n.linked('groups', '5511300000001');
    idle = await n.idle('groups-idle');
  });

  after(async () => {
    await n.stop();
  });

  describe('GET /api/group/list/:instance', () => {
    before(async () => {
      const res = await n.node.api.post(
        '/api/sandbox/group/groups',
        {
          subject: 'Team',
          description: 'the team',
          participants: [{ number: '5511300000002', admin: true }, { number: '5511300000003' }],
        },
        { token },
      );
      expect(res.status, res.text).to.equal(201);
      await n.node.api.post(
        '/api/sandbox/group/groups',
        { subject: 'Family', participants: [{ number: '5511300000004' }] },
        { token },
      );
    });

    it('lists every group with the spec fields and meta.total; members only on request, with derived admin flags', async () => {
      const res = await n.node.api.get('/api/group/list/groups', { token });
      expectOk(res);
      expect(res.body.message).to.equal('Groups retrieved successfully');
      expect(res.body.meta).to.deep.equal({ total: 2 });
      const team = res.body.groups.find((g: any) => g.name === 'Team');
      expect(Object.keys(team).sort()).to.deep.equal(['creatorJid', 'description', 'groupJid', 'memberCount', 'name']);
      expect(team).to.deep.include({
        description: 'the team',
        creatorJid: '5511300000001@s.whatsapp.net',
        memberCount: 3,
      });
      expect(team.groupJid).to.match(/^\d+@g\.us$/);

      const withMembers = await n.node.api.get('/api/group/list/groups?includeMembers=true', { token });
      expectOk(withMembers);
      const members = withMembers.body.groups.find((g: any) => g.name === 'Team').members;
      expect(members).to.deep.equal([
        { jid: '5511300000001@s.whatsapp.net', isAdmin: true, isSuperAdmin: true },
        { jid: '5511300000002@s.whatsapp.net', isAdmin: true, isSuperAdmin: false },
        { jid: '5511300000003@s.whatsapp.net', isAdmin: false, isSuperAdmin: false },
      ]);
    });

    it('answers the spec errors: not connected (400), unknown instance (404), no name (400), a bad flag (400)', async () => {
      expectError(await n.node.api.get('/api/group/list/groups-idle', { token: idle }), 400, NOT_CONNECTED);
      expectError(await n.node.api.get('/api/group/list/nope', { token: n.account }), 404, 'Instance not found');
      expectError(await n.node.api.get('/api/group/list/', { token: n.account }), 400, 'Instance name is required');
      expectError(await n.node.api.get('/api/group/list/', { token: 'bad-token' }), 401, 'Invalid token');
      expectError(
        await n.node.api.get('/api/group/list/groups?includeMembers=maybe', { token }),
        400,
        'includeMembers must be true or false',
      );
    });

    it('a network failure is a 500 with its reason', async () => {
      await n.fault('groups', token, 'listGroups', 'rate-overlimit');
      expectError(
        await n.node.api.get('/api/group/list/groups', { token }),
        500,
        'Failed to list groups: rate-overlimit',
      );
    });
  });

  describe('privacy', () => {
    const read = async () => {
      const res = await n.node.api.get('/api/profile/getPrivacy/groups', { token });
      expectOk(res);
      return res.body.settings;
    };

    it('GET returns the three groups; a new account has every value `all`', async () => {
      const res = await n.node.api.get('/api/profile/getPrivacy/groups', { token });
      expectOk(res);
      expect(res.body.settings).to.deep.equal({
        visibility: { lastSeen: 'all', status: 'all', profile: 'all', online: 'all' },
        privacy: { readReceipts: 'all' },
        permissions: { callAdd: 'all', groupAdd: 'all' },
      });
      expectError(await n.node.api.get('/api/profile/getPrivacy/groups-idle', { token: idle }), 400, NOT_CONNECTED);
      expectError(
        await n.node.api.get('/api/profile/getPrivacy/nope', { token: n.account }),
        404,
        'Instance not found',
      );
    });

    it('POST applies the given fields and answers with all settings re-read', async () => {
      const res = await n.node.api.post(
        '/api/profile/privacy/groups',
        {
          visibility: { lastSeen: 'contacts', online: 'match_last_seen' },
          permissions: { groupAdd: 'contact_blacklist' },
        },
        { token },
      );
      expectOk(res);
      expect(res.body.settings).to.deep.equal({
        visibility: { lastSeen: 'contacts', status: 'all', profile: 'all', online: 'match_last_seen' },
        privacy: { readReceipts: 'all' },
        permissions: { callAdd: 'all', groupAdd: 'contact_blacklist' },
      });
      expect(await read()).to.deep.equal(res.body.settings);
    });

    it('refuses each field’s invalid value with the exact message, stopping at the first and applying nothing', async () => {
      const before = await read();
      const cases: [Record<string, unknown>, string][] = [
        [{ visibility: { lastSeen: 'everyone' } }, `Invalid lastSeen value: everyone. Valid values: ${VISIBILITY}`],
        [{ visibility: { status: 'friends' } }, `Invalid status value: friends. Valid values: ${VISIBILITY}`],
        [{ visibility: { profile: 'nobody' } }, `Invalid profile value: nobody. Valid values: ${VISIBILITY}`],
        [{ visibility: { online: 'none' } }, 'Invalid online value: none. Valid values: all, match_last_seen'],
        [{ privacy: { readReceipts: 'contacts' } }, 'Invalid readReceipts value: contacts. Valid values: all, none'],
        [{ permissions: { callAdd: 'none' } }, 'Invalid callAdd value: none. Valid values: all, known'],
        [
          { permissions: { groupAdd: 'none' } },
          'Invalid groupAdd value: none. Valid values: all, contacts, contact_blacklist',
        ],
        [{ permissions: { callAdd: 5 } }, 'Invalid callAdd value: 5. Valid values: all, known'],
        // Valid fields before the invalid one are not applied either.
        [
          { visibility: { lastSeen: 'none', status: 'none', online: 'bogus' }, privacy: { readReceipts: 'x' } },
          'Invalid online value: bogus. Valid values: all, match_last_seen',
        ],
      ];
      for (const [body, message] of cases) {
        expectError(await n.node.api.post('/api/profile/privacy/groups', body, { token }), 400, message);
      }
      expect(await read()).to.deep.equal(before);
    });

    it('needs at least one setting; refuses unknown fields and malformed bodies', async () => {
      for (const body of [{}, { visibility: {} }, { visibility: {}, privacy: {}, permissions: {} }]) {
        expectError(
          await n.node.api.post('/api/profile/privacy/groups', body, { token }),
          400,
          'At least one privacy setting must be provided',
        );
      }
      expectError(
        await n.node.api.post('/api/profile/privacy/groups', { visibility: { lastseen: 'all' } }, { token }),
        400,
        "Invalid request body: unknown field 'lastseen' in 'visibility'",
      );
      // An unknown top-level field is ignored (X-Ignored-Fields): with nothing else, nothing to change.
      expectError(
        await n.node.api.post('/api/profile/privacy/groups', { other: {} }, { token }),
        400,
        'At least one privacy setting must be provided',
      );
      expectError(
        await n.node.api.post('/api/profile/privacy/groups', { visibility: 'all' }, { token }),
        400,
        "Invalid request body: field 'visibility': expected object",
      );
      expectError(
        await n.node.api.post('/api/profile/privacy/groups', undefined, { token, raw: '{"visibility":' }),
        400,
        'Invalid request body: malformed JSON',
      );
      expectError(
        await n.node.api.post(
          '/api/profile/privacy/groups-idle',
          { privacy: { readReceipts: 'none' } },
          { token: idle },
        ),
        400,
        NOT_CONNECTED,
      );
      expectError(
        await n.node.api.post('/api/profile/privacy/nope', { privacy: { readReceipts: 'none' } }, { token: n.account }),
        404,
        'Instance not found',
      );
      expectError(
        await n.node.api.post('/api/profile/privacy/', { privacy: { readReceipts: 'none' } }, { token: n.account }),
        400,
        'Instance name is required',
      );
    });

    it('applies fields one by one: a failing later field gives `failed to update <field> privacy` and the earlier stay', async () => {
      await n.node.api.post(
        '/api/profile/privacy/groups',
        { visibility: { lastSeen: 'all', status: 'all' } },
        { token },
      );
      await n.fault('groups', token, 'setPrivacy:status', 'server said no');
      const res = await n.node.api.post(
        '/api/profile/privacy/groups',
        { visibility: { lastSeen: 'none', status: 'contacts' } },
        { token },
      );
      expectError(res, 500, 'failed to update status privacy: server said no');
      expect((await read()).visibility).to.include({ lastSeen: 'none', status: 'all' });
    });
  });
});
