import { expect } from 'chai';
import type { BinaryNode } from '@whiskeysockets/baileys';
import { DeliveryQueues } from '../../simulator/server/delivery.js';
import { Directory } from '../../simulator/server/directory.js';
import type { Endpoint } from '../../simulator/server/directory.js';
import { StanzaLog } from '../../simulator/server/stanza-log.js';

class RecordingEndpoint implements Endpoint {
  readonly node = undefined;
  readonly sent: BinaryNode[] = [];
  constructor(readonly id: string) {}
  send(node: BinaryNode): void {
    this.sent.push(node);
  }
}

describe("the simulator's delivery rule: a stanza stays on the server until the device answers it", () => {
  const setup = () => {
    const log = new StanzaLog();
    const queues = new DeliveryQueues(log);
    const device = new Directory().create('5511900000001').addCompanion();
    return { log, queues, device };
  };
  const message = (id: string): BinaryNode => ({ tag: 'message', attrs: { id, from: 'x@s.whatsapp.net' } });

  it('sends at once to a connected device and again, marked offline, at the next login until answered', () => {
    const { queues, device } = setup();
    const first = new RecordingEndpoint('c1');
    device.endpoint = first;
    queues.deliver(device, message('M1'));
    expect(first.sent.map((n) => n.attrs.id)).to.deep.equal(['M1']);
    device.endpoint = undefined; // disconnected before its receipt
    const second = new RecordingEndpoint('c2');
    device.endpoint = second;
    expect(queues.flush(device)).to.equal(1);
    expect(second.sent[0]!.attrs).to.include({ id: 'M1', offline: '1' });
    expect(queues.settle(device, 'message', 'M1')).to.equal(true);
    const third = new RecordingEndpoint('c3');
    device.endpoint = third;
    expect(queues.flush(device)).to.equal(0);
    expect(third.sent).to.deep.equal([]);
  });

  it('keeps a stanza for a device that is away, and forgets a device that is unlinked', () => {
    const { queues, device } = setup();
    queues.deliver(device, message('M2'));
    expect(queues.pendingCount(device)).to.equal(1);
    queues.drop(device);
    expect(queues.pendingCount(device)).to.equal(0);
  });

  it('keys receipts by type: a read receipt does not replace a pending delivery receipt of the same id', () => {
    const { queues, device } = setup();
    queues.deliver(device, { tag: 'receipt', attrs: { id: 'M3', from: 'y@s.whatsapp.net' } });
    queues.deliver(device, { tag: 'receipt', attrs: { id: 'M3', from: 'y@s.whatsapp.net', type: 'read' } });
    expect(queues.pendingCount(device)).to.equal(2);
    expect(queues.settle(device, 'receipt:read', 'M3')).to.equal(true);
    expect(queues.pendingCount(device)).to.equal(1);
  });

  it('relays the next stanzas twice when asked (the fault WhatsApp produces)', () => {
    const { queues, device, log } = setup();
    const endpoint = new RecordingEndpoint('c1');
    device.endpoint = endpoint;
    queues.duplicateNext(device, 1);
    queues.deliver(device, message('M4'));
    queues.deliver(device, message('M5'));
    expect(endpoint.sent.map((n) => n.attrs.id)).to.deep.equal(['M4', 'M4', 'M5']);
    expect(
      log
        .after(0)
        .filter((e) => e.kind === 'deliver')
        .map((e) => e.sends),
    ).to.deep.equal([1, 2, 1]);
  });

  it("a refusal of the copy that failed, after the device's retry receipt, leaves the copy sent anew waiting", () => {
    const { queues, device } = setup();
    device.endpoint = new RecordingEndpoint('c1');
    queues.deliver(device, message('M7'));
    queues.retried(device, 'M7');
    queues.deliver(device, message('M7')); // the sender's new copy
    expect(queues.settle(device, 'message', 'M7', true)).to.equal(false);
    expect(queues.pendingCount(device)).to.equal(1);
    expect(queues.settle(device, 'message', 'M7')).to.equal(true);
    expect(queues.pendingCount(device)).to.equal(0);
    // Without a retry receipt before it, a refusal answers the message as before.
    queues.deliver(device, message('M8'));
    expect(queues.settle(device, 'message', 'M8', true)).to.equal(true);
  });
});
