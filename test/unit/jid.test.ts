import { expect } from 'chai';
import { parseAddress, requireAddress } from '../../src/msgnet/jid.js';

describe('addresses: one rule for numbers and JIDs', () => {
  const accepted: [string, string][] = [
    ['5511912345678', '5511912345678@s.whatsapp.net'],
    ['+5511912345678', '5511912345678@s.whatsapp.net'],
    ['+55 (11) 91234-5678', '5511912345678@s.whatsapp.net'],
    ['5511912345678@s.whatsapp.net', '5511912345678@s.whatsapp.net'],
    ['120363025246125486@g.us', '120363025246125486@g.us'],
    ['5511912345678-1600000000@g.us', '5511912345678-1600000000@g.us'],
    ['123456789012345@lid', '123456789012345@lid'],
  ];
  for (const [raw, jid] of accepted) it(`accepts ${raw}`, () => expect(parseAddress(raw)).to.equal(jid));

  const refused = [
    '-----------@g.us',
    '-5511912345678',
    '5511912345678-',
    '++5511912345678',
    '55-',
    '-@s.whatsapp.net',
    '55119-1234@s.whatsapp.net',
    '@g.us',
    '-1600000000@g.us',
    '5511912345678-@g.us',
    'abc',
    '12345',
    '123456789012345678901',
    '5511912345678@example.com',
    '5511912345678@s.whatsapp.net.evil',
    '',
  ];
  for (const raw of refused) it(`refuses ${JSON.stringify(raw)}`, () => expect(parseAddress(raw)).to.equal(undefined));

  it('names the field in the 400', () => {
    expect(() => requireAddress('-5511912345678', 'participants[1]')).to.throw(
      'Invalid participants[1]: expected digits with the country code (an optional +) or a JID',
    );
  });
});
