import { expect } from 'chai';
import { checkUrl, checkUrlSyntax, isBlockedAddress } from '../../src/security/url-policy.js';

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
