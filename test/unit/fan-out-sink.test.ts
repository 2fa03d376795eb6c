import { expect } from 'chai';
import { pino } from 'pino';
import type { InstanceEventSink } from '../../src/events/instance-event-sink.js';
import { NotOwnerError } from '../../src/errors.js';
import { FanOutSink } from '../../src/events/bus-event-sink.js';
import type { InstanceEvent } from '../../src/events/instance-events.js';
import type { InstanceRecord } from '../../src/store/records.js';

const instance = { id: 'inst-1', name: 'sales' } as InstanceRecord;
const event = { event: 'instance.state', data: { instance: 'sales', state: 'connected' } } as unknown as InstanceEvent;
const log = pino({ level: 'silent' });

/** A sink that fails its first `failures` calls. */
function sink(failures: number): InstanceEventSink & { calls: number } {
  const s = {
    calls: 0,
    async emit() {
      s.calls++;
      if (s.calls <= failures) throw new Error('store unavailable');
    },
  };
  return s;
}

describe('FanOutSink: one failing consumer starves no other, and the durable one loses nothing', () => {
  it('retries the durable sink until it has queued the event, publishing to the others once', async () => {
    const bus = sink(0);
    const queue = sink(3);
    const fan = new FanOutSink({ bestEffort: [bus], durable: queue, log, retryDelayMs: () => 5 });
    await fan.emit(instance, event);
    expect(queue.calls).to.equal(4);
    expect(bus.calls).to.equal(1);
  });

  it('a failing best-effort sink (the WebSocket bus) neither throws nor stops the durable one', async () => {
    const bus = sink(Infinity);
    const queue = sink(0);
    const fan = new FanOutSink({ bestEffort: [bus], durable: queue, log });
    await fan.emit(instance, event);
    expect(queue.calls).to.equal(1);
  });

  it('stops retrying, with its error, once the actor may no longer act', async () => {
    const queue = sink(Infinity);
    let allowed = 3;
    const stillOwner = () => {
      if (allowed-- <= 0) throw new NotOwnerError('inst-1');
    };
    const fan = new FanOutSink({ bestEffort: [], durable: queue, log, retryDelayMs: () => 5 });
    let caught: unknown;
    await fan.emit(instance, event, undefined, stillOwner).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(NotOwnerError);
    expect(queue.calls).to.equal(3);
  });

  it('queues durably first, and a hung publish (a stalled Redis) holds nothing behind it', async () => {
    const order: string[] = [];
    const bus: InstanceEventSink = {
      emit: () => {
        order.push('bus');
        return new Promise(() => undefined);
      },
    };
    const queue: InstanceEventSink = {
      async emit() {
        order.push('queue');
      },
    };
    const fan = new FanOutSink({ bestEffort: [bus], durable: queue, log });
    await fan.emit(instance, event);
    await fan.emit(instance, event);
    expect(order).to.deep.equal(['queue', 'bus', 'queue', 'bus']);
  });

  it('publishes nothing once the instance was lost while the event was being queued', async () => {
    const bus = sink(0);
    let owner = true;
    const queue: InstanceEventSink = {
      async emit() {
        owner = false;
      },
    };
    const stillOwner = () => {
      if (!owner) throw new NotOwnerError('inst-1');
    };
    const fan = new FanOutSink({ bestEffort: [bus], durable: queue, log });
    let caught: unknown;
    await fan.emit(instance, event, undefined, stillOwner).catch((err: unknown) => (caught = err));
    expect(caught).to.be.instanceOf(NotOwnerError);
    expect(bus.calls).to.equal(0);
  });

  it('publishes nothing of a message whose event was queued before, and says so', async () => {
    const bus = sink(0);
    const seen: unknown[] = [];
    const queue: InstanceEventSink = {
      async emit(_i, _e, _a, _s, once) {
        seen.push(once);
        return false;
      },
    };
    const fan = new FanOutSink({ bestEffort: [bus], durable: queue, log });
    expect(await fan.emit(instance, event, undefined, undefined, { messageId: 'M1' })).to.equal(false);
    expect(seen).to.deep.equal([{ messageId: 'M1' }]);
    expect(bus.calls).to.equal(0);
  });
});
