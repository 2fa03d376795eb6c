import { expect } from 'chai';
import { ForbiddenError } from '../../../src/errors.js';
import type { GroupInfo } from '../../../src/msgnet/msgnet-driver.js';
import { SandboxCommunities } from '../../../src/msgnet/sandbox/sandbox-communities.js';
import type { SandboxNet } from '../../../src/msgnet/sandbox/sandbox-net.js';
import type { SandboxPhone } from '../../../src/msgnet/sandbox/sandbox-phone.js';
import { MemoryAuthStore } from '../../helpers/baileys/memory-auth-store.js';

const ME = '5511850000001@s.whatsapp.net';
const OTHER = '5511850000002@s.whatsapp.net';
const GROUP = '120363000000000777@g.us';

/** The phone's groups as the groups domain reports them: this phone a plain member. */
const memberOnly: GroupInfo = {
  jid: GROUP,
  name: 'Not mine',
  description: '',
  creatorJid: OTHER,
  memberCount: 2,
  members: [
    { jid: OTHER, isAdmin: true, isSuperAdmin: true },
    { jid: ME, isAdmin: false, isSuperAdmin: false },
  ],
};

function net(groups: GroupInfo[]): { net: SandboxNet; recorded: unknown[] } {
  const recorded: unknown[] = [];
  return {
    recorded,
    net: {
      me: () => ME,
      auth: new MemoryAuthStore(),
      phone: { groups: async () => groups } as unknown as SandboxPhone,
      emit: () => undefined,
      failIf: () => undefined,
      publish: async () => 0,
      listen: async () => undefined,
      unlisten: async () => undefined,
      record: async (entry) => {
        recorded.push(entry);
        return { ...entry, messageId: 'M', timestamp: 0 };
      },
    },
  };
}

describe('sandbox communities: admin of both', () => {
  it('refuses to link or unlink a group the phone is only a member of', async () => {
    const { net: sandbox, recorded } = net([memberOnly]);
    const communities = new SandboxCommunities(sandbox);
    const { jid } = await communities.create('Street', '');
    for (const work of [communities.linkGroup(jid, GROUP), communities.unlinkGroup(jid, GROUP)]) {
      const err = await work.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(ForbiddenError);
      expect((err as Error).message).to.equal('This number is not an admin of the group');
    }
    expect((await communities.list())[0]!.groups).to.deep.equal([]);
    expect(recorded).to.have.length(1);
  });

  it('links a group once the phone is its admin', async () => {
    const admin = { ...memberOnly, members: [{ jid: ME, isAdmin: true, isSuperAdmin: false }] };
    const communities = new SandboxCommunities(net([admin]).net);
    const { jid } = await communities.create('Street', '');
    await communities.linkGroup(jid, GROUP);
    expect((await communities.list())[0]!.groups).to.deep.equal([{ jid: GROUP, subject: 'Not mine' }]);
  });
});
