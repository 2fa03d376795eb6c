import { expect } from 'chai';
import {
  checkHost,
  checkUrl,
  checkUrlSyntax,
  isBlockedAddress,
  publicOnlyLookup,
} from '../../src/security/url-policy.js';

describe('url policy', () => {
  const blocked = [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    'not-an-ip',
  ];
  const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'];

  for (const a of blocked) it(`blocks ${a}`, () => expect(isBlockedAddress(a)).to.equal(true));
  for (const a of allowed) it(`allows ${a}`, () => expect(isBlockedAddress(a)).to.equal(false));

  describe('IPv6 forms that carry an IPv4 address: refused when that address is not global', () => {
    const forms: [string, string, string][] = [
      ['IPv4-mapped', '::ffff:7f00:1', '::ffff:a00:1'],
      ['IPv4-compatible (deprecated: never global)', '::7f00:1', '::808:808'],
      ['IPv4-translated', '::ffff:0:7f00:1', '::ffff:0:a9fe:a9fe'],
      ['6to4', '2002:7f00:1::', '2002:a00:1::1'],
      ['NAT64 well-known prefix', '64:ff9b::7f00:1', '64:ff9b::a9fe:a9fe'],
      ['NAT64 local-use prefix (never global)', '64:ff9b:1::808:808', '64:ff9b:1::7f00:1'],
      // Teredo: server 65.54.227.120 (public); client 127.0.0.1 and 192.168.0.1, inverted in the last 32 bits.
      ['Teredo with a loopback client', '2001:0:4136:e378:8000:63bf:80ff:fffe', '2001:0:4136:e378:0:0:3f57:fefe'],
      ['Teredo with a private server', '2001:0:a00:1::1', '2001:0:c0a8:1::1'],
    ];
    for (const [form, first, second] of forms) {
      it(`refuses ${form}: ${first}, ${second}`, () => {
        expect(isBlockedAddress(first), first).to.equal(true);
        expect(isBlockedAddress(second), second).to.equal(true);
      });
    }

    it('allows the same forms around a global IPv4 address where the form itself is global', () => {
      for (const a of ['::ffff:808:808', '::ffff:0:808:808', '2002:808:808::1', '64:ff9b::808:808']) {
        expect(isBlockedAddress(a), a).to.equal(false);
      }
      // Teredo: server 65.54.227.120, client 8.8.8.8 (inverted: f7f7:f7f7).
      expect(isBlockedAddress('2001:0:4136:e378:8000:63bf:f7f7:f7f7')).to.equal(false);
    });

    it('refuses the documentation, benchmarking and other special IPv6 ranges', () => {
      for (const a of ['2001:db8::1', '2001:2::1', '3fff::1', '100::1', 'fec0::1', '5f00::1', '4000::1']) {
        expect(isBlockedAddress(a), a).to.equal(true);
      }
    });

    it('refuses the special IPv4 ranges beyond the private ones', () => {
      for (const a of ['192.0.0.8', '192.0.2.1', '198.18.0.1', '198.51.100.1', '203.0.113.1', '240.0.0.1']) {
        expect(isBlockedAddress(a), a).to.equal(true);
      }
      expect(isBlockedAddress('255.255.255.255')).to.equal(true);
    });

    it('refuses the forms in URLs, as literals', () => {
      for (const host of [
        '[::7f00:1]',
        '[::ffff:0:7f00:1]',
        '[2002:7f00:1::]',
        '[64:ff9b::7f00:1]',
        '[64:ff9b:1::1]',
      ]) {
        expect(checkUrlSyntax(`http://${host}/`, { allowPrivate: false }), host).to.deep.equal({
          reason: 'URLs pointing to internal networks are not allowed',
        });
      }
    });
  });

  describe('host checks (proxies)', () => {
    it('refuses internal names and addresses, and names that resolve to them', async () => {
      const resolver = async (name: string) => (name === 'inside.example' ? ['10.0.0.7'] : ['93.184.216.34']);
      for (const host of ['localhost', '127.0.0.1', '[::1]', 'proxy.internal', 'inside.example']) {
        expect(await checkHost(host, { allowPrivate: false }, resolver), host).to.have.property('reason');
      }
      expect(await checkHost('outside.example', { allowPrivate: false }, resolver)).to.deep.equal({
        addresses: ['93.184.216.34'],
      });
      expect(await checkHost('inside.example', { allowPrivate: true }, resolver)).to.deep.equal({
        addresses: ['10.0.0.7'],
      });
    });

    it('publicOnlyLookup hands the socket the checked address and fails on a private one', async () => {
      const resolver = async (name: string) => (name === 'inside.example' ? ['192.168.1.9'] : ['93.184.216.34']);
      const look = publicOnlyLookup(resolver);
      const run = (name: string, all: boolean) =>
        new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
          look(name, { all }, (err, address) => resolve({ err, address })),
        );
      expect(await run('outside.example', false)).to.deep.equal({ err: null, address: '93.184.216.34' });
      expect((await run('outside.example', true)).address).to.deep.equal([{ address: '93.184.216.34', family: 4 }]);
      const refused = await run('inside.example', false);
      expect(refused.err?.code).to.equal('EADDRNOTALLOWED');
      expect(refused.err?.message).to.equal('inside.example: URLs pointing to internal networks are not allowed');
    });
  });

  it('refuses schemes other than http(s), credentials, and internal host names', () => {
    const policy = { allowPrivate: false };
    for (const raw of [
      'ftp://x.example/',
      'file:///etc/passwd',
      'http://user:pw@x.example/',
      'http://localhost/x',
      'http://a.localhost/',
      'http://[::1]/',
      'http://127.1/',
      'http://2130706433/',
      'nonsense',
    ]) {
      expect(checkUrlSyntax(raw, policy), raw).to.have.property('reason');
    }
    expect(checkUrlSyntax('https://hooks.example.com/x', policy)).to.have.property('url');
  });

  it('requires HTTPS when asked, unless private URLs are allowed', () => {
    expect(checkUrlSyntax('http://x.example/', { allowPrivate: false, requireHttps: true })).to.have.property('reason');
    expect(checkUrlSyntax('http://127.0.0.1:9/', { allowPrivate: true, requireHttps: true })).to.have.property('url');
  });

  it('checks every resolved address', async () => {
    const resolver = (host: string) =>
      Promise.resolve(host === 'rebind.example' ? ['8.8.8.8', '10.0.0.5'] : ['93.184.216.34']);
    expect(await checkUrl('https://rebind.example/', { allowPrivate: false }, resolver)).to.have.property('reason');
    const ok = await checkUrl('https://fine.example/', { allowPrivate: false }, resolver);
    expect(ok).to.deep.include({ addresses: ['93.184.216.34'] });
    const failing = () => Promise.reject(new Error('ENOTFOUND'));
    expect(await checkUrl('https://nowhere.example/', { allowPrivate: false }, failing)).to.have.property('reason');
  });
});
