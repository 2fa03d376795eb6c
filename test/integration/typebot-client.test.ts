import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import {
  TypebotClient,
  TypebotRequestError,
  TypebotSessionGoneError,
} from '../../src/integrations/chatbot/typebot-client.js';

describe('Typebot client over HTTP', () => {
  it('maps answers: 404 on continue = session gone, 404 on start and 5xx = request errors, non-JSON refused, slow = deadline', async () => {
    const server = createServer((req, res) => {
      if (req.url?.includes('/slow/')) return; // never answers
      if (req.url?.includes('/sessions/')) {
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ code: 'NOT_FOUND', message: 'Session not found.' }));
      }
      if (req.url?.includes('/missing/')) {
        return void res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ message: 'Typebot not found' }));
      }
      if (req.url?.includes('/html/')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
      res.writeHead(502).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const client = new TypebotClient({ timeoutMs: 300, allowPrivateUrls: true });
    try {
      const gone = await client.continueChat(`${base}/flow`, 's1', 'hi').catch((e: unknown) => e);
      expect(gone).to.be.instanceOf(TypebotSessionGoneError);
      expect((gone as Error).message).to.equal('Chatbot flow call failed: HTTP 404 Session not found.');
      const missing = await client.startChat(`${base}/missing`, { prefilledVariables: {} }).catch((e: unknown) => e);
      expect(missing).to.be.instanceOf(TypebotRequestError).and.not.instanceOf(TypebotSessionGoneError);
      expect((missing as Error).message).to.equal('Chatbot flow call failed: HTTP 404 Typebot not found');
      expect(
        ((await client.startChat(`${base}/bad`, { prefilledVariables: {} }).catch((e: unknown) => e)) as Error).message,
      ).to.equal('Chatbot flow call failed: HTTP 502');
      expect(
        ((await client.startChat(`${base}/html`, { prefilledVariables: {} }).catch((e: unknown) => e)) as Error)
          .message,
      ).to.equal('Chatbot flow call failed: the answer is not a chat response');
      const slow = await client.startChat(`${base}/slow`, { prefilledVariables: {} }).catch((e: unknown) => e);
      expect((slow as Error).message).to.equal('Chatbot flow call failed: no answer within 300 ms');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
