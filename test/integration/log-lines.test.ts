import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { startNode } from '../../src/node.js';
import { connectedSession } from '../helpers/baileys/baileys-harness.js';
import { boom } from '../helpers/baileys/fake-baileys-socket.js';
import { ADMIN_TOKEN, ApiClient } from '../helpers/test-node.js';

/** The keys of a JSON object line at its top level, in order, duplicates kept (JSON.parse would drop them). */
export function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '"') {
      let j = i + 1;
      while (line[j] !== '"') j += line[j] === '\\' ? 2 : 1;
      let k = j + 1;
      while (line[k] === ' ') k++;
      if (depth === 1 && line[k] === ':') keys.push(JSON.parse(line.slice(i, j + 1)) as string);
      i = j;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
  }
  return keys;
}

/** A pino logger at `level` whose lines are kept, and the lines that repeat a key. */
function capture(level: string) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const repeated = () =>
    lines.filter((line) => {
      const keys = topLevelKeys(line);
      return new Set(keys).size !== keys.length;
    });
  return { logger: pino({ level }, stream), lines, repeated };
}

describe('log lines: one binding per key', () => {
  it('finds a repeated key (the scanner itself)', () => {
    expect(topLevelKeys('{"a":1,"b":{"a":2},"c":"x\\"a\\":","a":3}')).to.deep.equal(['a', 'b', 'c', 'a']);
  });

  it('a node linking, receiving and sending logs no line with a key twice', async function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-logs-'));
    const { logger, lines, repeated } = capture('debug');
    const config = loadConfig({ PORT: '0', DATA_DIR: dir, ADMIN_TOKEN, MSGNET_DRIVER: 'sandbox', LOG_LEVEL: 'debug' });
    const node = await startNode(config, { logger });
    try {
      const api = new ApiClient(node.url);
      const account = await api.post('/api/admin/accounts', { name: 'logs' }, { token: ADMIN_TOKEN });
      const accountToken = account.body.account.token as string;
      const created = await api.post('/api/instance/new', { name: 'logged' }, { token: accountToken });
      const token = created.body.instance.token as string;
      await api.get('/api/instance/connect/logged', { token });
      await api.post('/api/sandbox/link/logged', { number: '5511977770000' }, { token });
      await api.post('/api/sandbox/inbound/logged', { from: '5511966660000', text: 'hello' }, { token });
      await api.post('/api/message/text/logged', { number: '5511966660000', text: 'hi' }, { token });
      await api.post('/api/message/text/logged', { number: 'not-a-number', text: 'hi' }, { token });
    } finally {
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(lines.length).to.be.greaterThan(10);
    expect(repeated()).to.deep.equal([]);
  });

  it("the Baileys session's lines bind the instance once (the actor's logger already names it)", async () => {
    const { logger, lines, repeated } = capture('trace');
    const h = await connectedSession({ log: logger.child({ instanceId: 'inst-1', epoch: 1 }) });
    // A transient close: the session logs that it reconnects after a delay.
    h.factory.last.close(boom(428));
    await new Promise((r) => setTimeout(r, 100));
    await h.session.close();
    expect(lines.length).to.be.greaterThan(0);
    expect(repeated()).to.deep.equal([]);
  });
});
