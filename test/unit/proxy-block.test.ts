import { expect } from 'chai';
import { checkProxyAddress, proxyBlock } from '../../src/instances/instance-blocks.js';
import { SecretBox } from '../../src/security/secret-box.js';

describe('proxy block: the proxy host against the address policy', () => {
  const resolve = async (name: string) => {
    if (name === 'inside.example.com') return ['10.20.30.40'];
    if (name === 'outside.example.com') return ['93.184.216.34'];
    throw new Error('ENOTFOUND');
  };
  const ctx = { secrets: new SecretBox(Buffer.alloc(32, 9)), allowPrivateUrls: false, resolve };
  const save = (host: string, context = ctx) =>
    checkProxyAddress(proxyBlock({ proxyEnabled: true, proxyHost: host, proxyPort: '3128' }, context), context);

  it('refuses a name that resolves to an internal address at save time', async () => {
    expect(await save('inside.example.com')).to.deep.equal({
      error: 'proxyHost: proxies on internal networks are not allowed',
    });
  });

  it('keeps a public name, and a name that does not resolve now (the driver checks again at connect time)', async () => {
    expect(await save('outside.example.com')).to.have.nested.property('value.host', 'outside.example.com');
    expect(await save('unknown.example.com')).to.have.nested.property('value.host', 'unknown.example.com');
  });

  it('ALLOW_PRIVATE_URLS lifts the check', async () => {
    const open = { ...ctx, allowPrivateUrls: true };
    expect(await save('inside.example.com', open)).to.have.nested.property('value.host', 'inside.example.com');
    expect(await save('127.0.0.1', open)).to.have.nested.property('value.host', '127.0.0.1');
  });
});
