import { connect } from 'node:net';
import { expect } from 'chai';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';

/** A raw connection: what the server wrote until it closed, and how long it took (or `open` after `waitMs`). */
function rawExchange(url: string, chunks: string[], waitMs: number): Promise<{ text: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      for (const chunk of chunks) socket.write(chunk);
    });
  });
}

describe('slow clients: header and request timeouts (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS)', () => {
  let node: TestNode;
  let token: string;

  before(async () => {
    node = await startTestNode({ HTTP_HEADERS_TIMEOUT_MS: '400', HTTP_REQUEST_TIMEOUT_MS: '800' });
    token = await node.createAccount('slow');
    await node.createInstance(token, { name: 'slow-one' });
  });
  after(async () => {
    await node?.stop();
  });

  it('answers 408 and closes a connection whose headers never finish', async () => {
    const res = await rawExchange(node.url, ['GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n'], 5000);
    expect(res.closed, 'closed by the server').to.equal(true);
    expect(res.text).to.match(/^HTTP\/1\.1 408 /);
  });

  it('answers 408 and closes a request that promises a body and never sends it', async () => {
    const head =
      'POST /api/instance/settings/slow-one HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `token: ${token}\r\nContent-Length: 100\r\n\r\n{"autoReadMessages":`;
    const res = await rawExchange(node.url, [head], 5000);
    expect(res.closed, 'closed by the server').to.equal(true);
    expect(res.text).to.match(/^HTTP\/1\.1 408 /);
    const settings = await node.api.get('/api/instance/getSettings/slow-one', { token });
    expect(settings.body.settings.autoReadMessages).to.equal(false);
  });

  it('leaves an idle keep-alive connection open past the header timeout', async () => {
    const res = await rawExchange(node.url, ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n'], 1500);
    expect(res.text).to.match(/^HTTP\/1\.1 200 /);
    expect(res.closed, 'still open after 1.5 s').to.equal(false);
  });
});
