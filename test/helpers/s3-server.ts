import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

/** s3rver's built-in credentials: the only ones it accepts (a wrong access key id is refused). */
export const S3_ACCESS_KEY = 'S3RVER';
export const S3_SECRET_KEY = 'S3RVER';

/** A local S3-compatible server on a free loopback port, on a temporary directory, with `buckets`. */
export class LocalS3 {
  private constructor(
    private readonly server: S3rver,
    private readonly dir: string,
    readonly endpoint: string,
    private readonly client: S3Client,
  ) {}

  static async start(buckets: string[]): Promise<LocalS3> {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-s3-'));
    const server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory: dir,
      configureBuckets: buckets.map((name) => ({ name, configs: [] })),
    });
    const { port } = await server.run();
    const endpoint = `http://127.0.0.1:${port}`;
    const client = new S3Client({
      region: 'us-east-1',
      endpoint,
      forcePathStyle: true,
      credentials: { accessKeyId: S3_ACCESS_KEY, secretAccessKey: S3_SECRET_KEY },
    });
    return new LocalS3(server, dir, endpoint, client);
  }

  async keys(bucket: string, prefix = ''): Promise<string[]> {
    const res = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (res.Contents ?? []).map((o) => o.Key!).sort();
  }

  async object(bucket: string, key: string): Promise<{ body: Buffer; contentType: string | undefined }> {
    const res = await this.client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return { body: Buffer.from(await res.Body!.transformToByteArray()), contentType: res.ContentType };
  }

  async stop(): Promise<void> {
    this.client.destroy();
    await this.server.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
