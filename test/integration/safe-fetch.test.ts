import type { ServerResponse } from 'node:http';
import { expect } from 'chai';
import { FetchFailedError, FetchRefusedError, safeFetch } from '../../src/media/safe-fetch.js';
import type { SafeFetchOptions } from '../../src/media/safe-fetch.js';
import { startFileServer, streamBytes } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';

/** A documentation address standing in for a public host; the test's `dial` sends it to the local server. */
const PUBLIC_ADDRESS = '93.184.216.34';
const MB = 1024 * 1024;

describe('safeFetch', function () {
  this.timeout(20_000);
  let server: FileServer;
  let resolved: string[];

  /** Public-looking names resolve to PUBLIC_ADDRESS, which is dialled as 127.0.0.1: the pinned connection. */
  const publicHost = (over: Partial<SafeFetchOptions> = {}): SafeFetchOptions => ({
    allowPrivate: false,
    maxBytes: 16 * MB,
    timeoutMs: 5000,
    resolve: async (host) => {
      resolved.push(host);
      if (host === 'internal.example') return ['10.0.0.5'];
      if (host === 'mixed.example') return [PUBLIC_ADDRESS, '127.0.0.1'];
      return [PUBLIC_ADDRESS];
    },
    dial: (address) => (address === PUBLIC_ADDRESS ? '127.0.0.1' : address),
    ...over,
  });
  const at = (host: string, path: string) => `http://${host}:${server.port}${path}`;

  async function refused(url: string, o: SafeFetchOptions = publicHost()): Promise<FetchRefusedError> {
    const err = await safeFetch(url, o).catch((e: unknown) => e);
    expect(err, String(err)).to.be.instanceOf(FetchRefusedError);
    return err as FetchRefusedError;
  }

  async function failed(url: string, o: SafeFetchOptions = publicHost()): Promise<FetchFailedError> {
    const err = await safeFetch(url, o).catch((e: unknown) => e);
    expect(err, String(err)).to.be.instanceOf(FetchFailedError);
    return err as FetchFailedError;
  }

  before(async () => {
    server = await startFileServer();
    server.serve('/ok', Buffer.from('hello'), 'text/plain');
    server.route('/secret', (_req, res) => res.writeHead(200).end('internal data'));
    const redirect = (location: string) => (_req: unknown, res: ServerResponse) =>
      res.writeHead(302, { location }).end();
    server.route('/to-loopback', redirect(`http://127.0.0.1:${server.port}/secret`));
    server.route('/to-metadata', redirect('http://169.254.169.254/latest/meta-data/'));
    server.route('/to-v6-loopback', redirect(`http://[::1]:${server.port}/secret`));
    server.route('/to-private-name', redirect(`http://internal.example:${server.port}/secret`));
    server.route('/to-file', redirect('file:///etc/passwd'));
    server.route('/relative', redirect('/ok'));
    for (let n = 1; n <= 4; n++) server.route(`/chain/${n}`, redirect(n === 1 ? '/ok' : `/chain/${n - 1}`));
    server.route('/declared-huge', (_req, res) => res.writeHead(200, { 'content-length': String(50 * MB) }).end());
    server.route('/hang', () => undefined);
  });

  after(async () => {
    await server.close();
  });

  beforeEach(() => {
    resolved = [];
  });

  it('resolves each hop once and connects only to the checked address (the name is unknown to the system DNS)', async () => {
    const got = await safeFetch(at('media.example', '/ok'), publicHost());
    expect(got.bytes.toString()).to.equal('hello');
    expect(got.contentType).to.equal('text/plain');
    expect(got.finalUrl).to.equal(at('media.example', '/ok'));
    expect(resolved).to.deep.equal(['media.example']);
    expect(server.headers.get('/ok')?.host).to.equal(`media.example:${server.port}`);
  });

  it('refuses literal internal addresses without connecting', async () => {
    const before = server.hits.get('/secret') ?? 0;
    for (const host of [
      '127.0.0.1',
      '10.1.2.3',
      '169.254.169.254',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '0.0.0.0',
      '192.168.1.10',
      '100.64.0.1',
      '[fe80::1]',
      'localhost',
    ]) {
      const err = await refused(at(host, '/secret'));
      expect(err.reason, host).to.equal('URLs pointing to internal networks are not allowed');
    }
    expect(server.hits.get('/secret') ?? 0).to.equal(before);
  });

  it('refuses names that resolve to an internal address, even alongside a public one', async () => {
    await refused(at('internal.example', '/secret'));
    await refused(at('mixed.example', '/secret'));
    expect(server.hits.get('/secret') ?? 0).to.equal(0);
  });

  it('re-checks every redirect: into loopback, link-local metadata, IPv6 loopback, a private name or file: is refused', async () => {
    for (const path of ['/to-loopback', '/to-metadata', '/to-v6-loopback', '/to-private-name', '/to-file']) {
      const err = await refused(at('media.example', path));
      expect(err.message, path).to.match(/^URL refused: redirect refused: /);
    }
    expect(server.hits.get('/secret') ?? 0).to.equal(0);
  });

  it('follows relative redirects and at most 3 of them', async () => {
    expect((await safeFetch(at('media.example', '/relative'), publicHost())).finalUrl).to.equal(
      at('media.example', '/ok'),
    );
    expect((await safeFetch(at('media.example', '/chain/3'), publicHost())).bytes.toString()).to.equal('hello');
    expect((await failed(at('media.example', '/chain/4'))).reason).to.equal('more than 3 redirects');
  });

  it('aborts a body past the byte limit (a 50 MB image) without reading it all', async () => {
    const written = { bytes: 0 };
    server.route('/huge', streamBytes(50 * MB, written));
    const err = await failed(at('media.example', '/huge'));
    expect(err.reason).to.equal(`the body is larger than ${16 * MB} bytes`);
    expect(written.bytes).to.be.below(40 * MB);
    expect((await failed(at('media.example', '/declared-huge'))).reason).to.equal(
      `the body is larger than ${16 * MB} bytes`,
    );
  });

  it('gives up at the time limit', async () => {
    const err = await failed(at('media.example', '/hang'), publicHost({ timeoutMs: 300 }));
    expect(err.reason).to.equal('no complete answer within 300 ms');
  });

  it('fails on HTTP errors and unreachable hosts with a typed error (media_download_failed)', async () => {
    const err = await failed(at('media.example', '/missing'));
    expect(err.reason).to.equal('HTTP 404');
    expect(err.code).to.equal('media_download_failed');
    const unresolvable = await failed(
      at('nowhere.example', '/'),
      publicHost({ resolve: async () => Promise.reject(new Error('ENOTFOUND')) }),
    );
    expect(unresolvable.reason).to.match(/could not be resolved/);
  });

  it('refuses other schemes and credentials in URLs', async () => {
    for (const url of [
      'file:///etc/passwd',
      'ftp://media.example/a.png',
      'gopher://media.example/',
      'data:text/plain,hi',
    ]) {
      expect((await refused(url)).reason).to.equal('only http and https URLs are allowed');
    }
    expect((await refused(`http://user:pw@media.example:${server.port}/ok`)).reason).to.equal(
      'credentials in URLs are not allowed',
    );
    expect((await refused('not a url')).reason).to.equal('not a valid URL');
  });

  it('ALLOW_PRIVATE_URLS lifts the range check (development and tests)', async () => {
    const got = await safeFetch(server.url('/ok'), { allowPrivate: true, maxBytes: MB, timeoutMs: 5000 });
    expect(got.bytes.toString()).to.equal('hello');
  });
});
