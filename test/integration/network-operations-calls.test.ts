import { expect } from 'chai';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const CALLEE = '5511700000002';
const CALLEE_JID = `${CALLEE}@s.whatsapp.net`;
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe('network operations: calls (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let token: string;

  const fake = (body: unknown, name = 'caller', t = token) =>
    n.node.api.post(`/api/call/fake/${name}`, body, { token: t });
  const schedule = (body: unknown, name = 'caller', t = token) =>
    n.node.api.post(`/api/call/schedule/${name}`, body, { token: t });

  before(async () => {
    n = await startNetworkNode();
    token = await n.linked('caller', '5511700000001');
  });

  after(async () => {
    await n.stop();
  });

  describe('POST /api/call/fake/:instance', () => {
    it('rings and hangs up after the duration: {success, message, callId, number, duration}; 0 or omitted means 8', async () => {
      const res = await fake({ number: CALLEE, duration: 3 });
      expectOk(res);
      expect(Object.keys(res.body).sort()).to.deep.equal(['callId', 'duration', 'message', 'number', 'success']);
      expect(res.body).to.include({ message: 'Call placed successfully', number: CALLEE, duration: 3 });
      const offer = (await n.outbox('caller', token, CALLEE)).at(-1);
      expect(offer).to.deep.include({ type: 'call_offer', call: { callId: res.body.callId, durationSeconds: 3 } });
      expect((await fake({ number: CALLEE })).body.duration).to.equal(8);
      expect((await fake({ number: CALLEE, duration: 0 })).body.duration).to.equal(8);
      expect((await fake({ number: `${CALLEE_JID}`, duration: 60 })).body.duration).to.equal(60);
      expect((await fake({ number: CALLEE, duration: 1 })).body.duration).to.equal(1);
    });

    it('the callee’s phone rings, then the call ends by itself after `duration` seconds', async () => {
      const callee = await n.linked('callee', CALLEE);
      const events = await n.record(callee);
      const res = await fake({ number: CALLEE, duration: 1 });
      expectOk(res);
      const statuses = () =>
        events
          .filter((e) => e.event === 'call.update' && (e.data as { callId: string }).callId === res.body.callId)
          .map((e) => (e.data as { status: string }).status);
      const started = Date.now();
      while (!statuses().includes('terminated') && Date.now() - started < 5000) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(statuses()).to.deep.equal(['offer', 'terminated']);
      expect(Date.now() - started).to.be.within(700, 4000);
    });

    it('answers its spec errors with their exact messages', async () => {
      expectError(
        await n.node.api.post('/api/call/fake/', { number: CALLEE }, { token: n.account }),
        400,
        'Instance name is required',
      );
      expectError(
        await n.node.api.post('/api/call/fake', { number: CALLEE }, { token: n.account }),
        400,
        'Instance name is required',
      );
      expectError(
        await fake({ number: CALLEE, duration: '5' }),
        400,
        "Invalid request body: field 'duration': expected number, received string",
      );
      expectError(
        await n.node.api.post('/api/call/fake/caller', undefined, { token, raw: 'not json' }),
        400,
        'Invalid request body: malformed JSON',
      );
      expectError(await fake({ duration: 5 }), 400, 'Number is required');
      expectError(await fake({ number: '', duration: 5 }), 400, 'Number is required');
      for (const duration of [61, -1, 3600]) {
        expectError(await fake({ number: CALLEE, duration }), 400, 'Duration must be between 1 and 60 seconds');
      }
      expectError(
        await n.node.api.post('/api/call/fake/ghost', { number: CALLEE }, { token: n.account }),
        404,
        'instance not found',
      );
      const idle = await n.idle('caller-idle');
      expectError(await fake({ number: CALLEE }, 'caller-idle', idle), 400, 'Instance is not connected to WhatsApp');
      await n.fault('caller', token, 'offerCall', 'call stanza refused');
      expectError(await fake({ number: CALLEE }), 500, 'call stanza refused');
    });
  });

  describe('POST /api/call/schedule/:instance', () => {
    it('creates a call link and sends the event card: {success, messageId, token, url, startTime}', async () => {
      const startTime = inAnHour();
      const res = await schedule({
        number: CALLEE,
        name: 'Demo',
        description: 'agenda',
        startTime,
        endTime: startTime + 1800,
        video: true,
        reminderOffsetSec: 600,
      });
      expectOk(res);
      expect(Object.keys(res.body).sort()).to.deep.equal(['messageId', 'startTime', 'success', 'token', 'url']);
      expect(res.body.startTime).to.equal(startTime);
      expect(res.body.url).to.equal(`https://call.whatsapp.com/video/${res.body.token}`);
      const card = (await n.outbox('caller', token, CALLEE)).at(-1);
      expect(card).to.deep.include({ messageId: res.body.messageId, type: 'event' });
      expect(card.event).to.deep.equal({
        name: 'Demo',
        description: 'agenda',
        startTime,
        endTime: startTime + 1800,
        video: true,
        reminderOffsetSec: 600,
        joinLink: res.body.url,
      });
      const audio = await schedule({ number: CALLEE, name: 'Call', startTime, endTime: 0 });
      expect(audio.body.url).to.equal(`https://call.whatsapp.com/voice/${audio.body.token}`);
      expect((await n.outbox('caller', token, CALLEE)).at(-1).event).to.not.have.property('endTime');
    });

    it('answers its spec errors with their exact messages', async () => {
      const startTime = inAnHour();
      expectError(
        await n.node.api.post('/api/call/schedule/', { number: CALLEE }, { token: n.account }),
        400,
        'Instance name is required',
      );
      expectError(
        await schedule({ number: CALLEE, name: 'x', startTime: 'tomorrow' }),
        400,
        "Invalid request body: field 'startTime': expected number, received string",
      );
      expectError(await schedule({ name: 'x', startTime }), 400, 'Number is required');
      expectError(await schedule({ number: CALLEE, startTime }), 400, 'Invalid request body: name is required');
      expectError(await schedule({ number: CALLEE, name: 'x' }), 400, 'Invalid request body: startTime is required');
      expectError(
        await schedule({ number: CALLEE, name: 'x', startTime: Math.floor(Date.now() / 1000) - 60 }),
        400,
        'startTime must be in the future (Unix seconds)',
      );
      expectError(
        await schedule({ number: CALLEE, name: 'x', startTime: Date.now() + 3_600_000 }),
        400,
        'Invalid request body: startTime must be in Unix seconds, not milliseconds',
      );
      expectError(
        await schedule({ number: CALLEE, name: 'x', startTime, endTime: startTime }),
        400,
        'endTime must be after startTime',
      );
      expectError(
        await schedule({ number: CALLEE, name: 'x', startTime, endTime: startTime - 10 }),
        400,
        'endTime must be after startTime',
      );
      expectError(
        await schedule({ number: '120363000000000001@g.us', name: 'x', startTime }),
        400,
        'Invalid request body: calls go to a number, not a group',
      );
      expectError(
        await n.node.api.post(
          '/api/call/schedule/ghost',
          { number: CALLEE, name: 'x', startTime },
          { token: n.account },
        ),
        404,
        'instance not found',
      );
      await n.fault('caller', token, 'createCallLink', 'call link quota reached');
      expectError(await schedule({ number: CALLEE, name: 'x', startTime }), 500, 'call link quota reached');
      await n.fault('caller', token, 'sendEventCard', 'event message rejected');
      expectError(await schedule({ number: CALLEE, name: 'x', startTime }), 500, 'event message rejected');
    });
  });
});
