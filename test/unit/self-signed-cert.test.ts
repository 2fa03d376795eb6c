import { expect } from 'chai';
import { X509Certificate } from 'node:crypto';
import { certificateSerial, makeSelfSignedCert } from '../../simulator/media/self-signed-cert.js';

describe("the simulator's self-signed certificate", () => {
  it('gives every serial a first byte that keeps it positive and in its shortest DER form', () => {
    for (const first of [0x00, 0x01, 0x7f, 0x80, 0xff]) {
      const serial = certificateSerial(Buffer.from([first, 0x05, 0x06]));
      expect(serial[0]! & 0x80, `from ${first}`).to.equal(0);
      expect(serial[0], `from ${first}`).to.be.at.least(0x40);
      expect([...serial.subarray(1)]).to.deep.equal([0x05, 0x06]);
    }
  });

  it('is read by Node as a certificate for localhost and 127.0.0.1', () => {
    const x509 = new X509Certificate(makeSelfSignedCert().cert);
    expect(x509.checkHost('localhost')).to.equal('localhost');
    expect(x509.checkIP('127.0.0.1')).to.equal('127.0.0.1');
  });
});
