import { expect } from 'chai';
import {
  ObjectStorageClients,
  contentDisposition,
  describeStorageError,
  normalizedPrefix,
  objectKey,
} from '../../src/media/object-storage.js';
import type { StorageTarget } from '../../src/media/object-storage.js';

const target: StorageTarget = {
  region: 'eu-west-1',
  bucket: 'media',
  accessKey: 'AK',
  secretKey: 'SK',
  endpoint: undefined,
  pathPrefix: 'wa',
};

const AT = Date.UTC(2026, 10, 2, 23, 59);

describe('object storage: keys, URLs and readable errors', () => {
  it('lays out keys as <prefix>/<instanceId>/<yyyy>/<mm>/<dd>/<messageId>.<ext>', () => {
    expect(objectKey('wa', 'inst-1', '3EB0ABC', { mimetype: 'image/jpeg' }, AT)).to.equal(
      'wa/inst-1/2026/11/02/3EB0ABC.jpg',
    );
    expect(objectKey('/a/b//', 'i', 'M', { mimetype: 'audio/ogg; codecs=opus' }, AT)).to.equal(
      'a/b/i/2026/11/02/M.ogg',
    );
    expect(objectKey('', 'i', 'M', { mimetype: 'application/octet-stream', fileName: 'Report.PDF' }, AT)).to.equal(
      'i/2026/11/02/M.pdf',
    );
    expect(objectKey('', 'i', 'M', { mimetype: 'application/x-unknown' }, AT), 'no extension when unknown').to.equal(
      'i/2026/11/02/M',
    );
    expect(objectKey('', 'i', '../evil/id', { mimetype: 'image/png' }, AT), 'ids cannot climb the prefix').to.equal(
      'i/2026/11/02/.._evil_id.png',
    );
    expect(normalizedPrefix('')).to.equal('');
    expect(normalizedPrefix('x/')).to.equal('x/');
  });

  it('keeps a non-ASCII file name in Content-Disposition', () => {
    expect(contentDisposition('relatório "final".pdf')).to.equal(
      `inline; filename="relat_rio _final_.pdf"; filename*=UTF-8''relat%C3%B3rio%20%22final%22.pdf`,
    );
  });

  it('gives plain URLs in the store’s own form: virtual-hosted, path-style for dotted buckets and custom endpoints', async () => {
    const clients = new ObjectStorageClients({
      allowPrivateUrls: false,
      timeoutMs: 1000,
      urlExpirySeconds: 60,
      publicUrls: true,
    });
    try {
      expect(await clients.for(target).url('wa/a b.jpg')).to.equal(
        'https://media.s3.eu-west-1.amazonaws.com/wa/a%20b.jpg',
      );
      expect(await clients.for({ ...target, bucket: 'media.example' }).url('k')).to.equal(
        'https://s3.eu-west-1.amazonaws.com/media.example/k',
      );
      expect(await clients.for({ ...target, endpoint: 'https://minio.example.com/' }).url('k')).to.equal(
        'https://minio.example.com/media/k',
      );
    } finally {
      clients.close();
    }
  });

  it('presigns URLs locally with the configured expiry', async () => {
    const clients = new ObjectStorageClients({
      allowPrivateUrls: false,
      timeoutMs: 1000,
      urlExpirySeconds: 600,
      publicUrls: false,
    });
    try {
      const url = new URL(await clients.for({ ...target, endpoint: 'https://minio.example.com' }).url('wa/k.jpg'));
      expect(`${url.origin}${url.pathname}`).to.equal('https://minio.example.com/media/wa/k.jpg');
      expect(url.searchParams.get('X-Amz-Expires')).to.equal('600');
      expect(url.searchParams.get('X-Amz-Credential')).to.match(/^AK\//);
    } finally {
      clients.close();
    }
  });

  it('says what to fix for the usual failures', () => {
    const named = (name: string) => Object.assign(new Error('x'), { name, $metadata: { httpStatusCode: 403 } });
    expect(describeStorageError(named('InvalidAccessKeyId'), target, 1000)).to.equal(
      'the access key id is not known to the storage service (InvalidAccessKeyId)',
    );
    expect(describeStorageError(named('SignatureDoesNotMatch'), target, 1000)).to.equal(
      'the secret access key does not match the access key id (SignatureDoesNotMatch)',
    );
    expect(describeStorageError(named('NoSuchBucket'), target, 1000)).to.equal(
      'bucket "media" does not exist (NoSuchBucket)',
    );
    expect(describeStorageError(named('AccessDenied'), target, 1000)).to.include('access to bucket "media" was denied');
    expect(describeStorageError(Object.assign(new Error('aborted'), { name: 'AbortError' }), target, 1500)).to.equal(
      'no answer from s3.eu-west-1.amazonaws.com within 1500 ms',
    );
    expect(
      describeStorageError(
        Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        { ...target, endpoint: 'http://10.0.0.5:9000' },
        1000,
      ),
    ).to.equal('cannot reach 10.0.0.5:9000: connection refused');
    expect(
      describeStorageError(
        Object.assign(new Error('UnknownError'), { name: 'Unknown', $metadata: { httpStatusCode: 501 } }),
        target,
        1000,
      ),
    ).to.equal('the storage service refused the request: HTTP 501');
  });

  it('refuses an endpoint whose name resolves to an internal address when private URLs are not allowed', async () => {
    const clients = new ObjectStorageClients({
      allowPrivateUrls: false,
      timeoutMs: 2000,
      urlExpirySeconds: 60,
      publicUrls: false,
    });
    try {
      const storage = clients.for({ ...target, endpoint: 'http://localhost:9' });
      const failure = await storage.check().then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(failure).to.equal('localhost:9 resolves to an internal network address, which is not allowed');
    } finally {
      clients.close();
    }
  });
});
