import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect } from 'chai';
import { ENV_OPTIONS, loadConfig } from '../../src/config/config.js';

/**
 * The deploy files, read as a container runtime would read them: every variable they set is one the node
 * reads, and the values that must agree do. (`docker compose config` and `docker build` run in CI only
 * where a Docker client with the compose plugin, or a daemon, exists; these checks run everywhere.)
 */
// js-yaml ships no types; the two calls used here are typed by hand.
const yaml = createRequire(import.meta.url)('js-yaml') as { load(s: string): unknown; loadAll(s: string): unknown[] };

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const known = new Set(ENV_OPTIONS);

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: unknown;
}

describe('deploy manifests', () => {
  const compose = yaml.load(read('deploy/compose.yaml')) as { services: Record<string, ComposeService> };
  const nodes = Object.entries(compose.services).filter(([, s]) => s.build !== undefined);
  const k8s = yaml.loadAll(read('deploy/k8s/deployment.yaml')) as {
    kind: string;
    spec?: { template?: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  }[];
  const secret = yaml.load(read('deploy/k8s/secret.yaml')) as { stringData: Record<string, string> };
  const container = k8s.find((d) => d.kind === 'Deployment')!.spec!.template!.spec.containers[0]!;

  it('compose: three nodes from the Dockerfile, each set only variables the node reads, with distinct ids', () => {
    expect(nodes.map(([name]) => name)).to.have.length(3);
    for (const [name, service] of nodes) {
      const unknown = Object.keys(service.environment ?? {}).filter((k) => !known.has(k));
      expect(unknown, `${name} sets variables no node reads`).to.deep.equal([]);
      expect(service.depends_on, name).to.deep.include({
        redis: { condition: 'service_healthy' },
        mongo: { condition: 'service_healthy' },
      });
    }
    expect(new Set(nodes.map(([, s]) => s.environment?.NODE_ID)).size).to.equal(3);
  });

  it('compose: MongoDB runs as the replica set the nodes name, and Redis keeps an append-only file', () => {
    const mongo = compose.services.mongo!;
    const set = mongo.command![mongo.command!.indexOf('--replSet') + 1];
    for (const [name, service] of nodes) {
      expect(service.environment?.MONGO_URL, name).to.include(`replicaSet=${set}`);
    }
    expect(JSON.stringify(mongo.healthcheck)).to.include(`_id: '${set}'`);
    expect(compose.services.redis!.command).to.include.members(['--appendonly', 'yes']);
    for (const [name, service] of Object.entries(compose.services)) {
      if (service.image) expect(service.image, name).to.match(/:[0-9]/);
    }
  });

  it('compose: the values a node gets are accepted by its configuration', () => {
    const [, first] = nodes[0]!;
    const env = Object.fromEntries(
      Object.entries(first.environment ?? {}).map(([k, v]) => [
        k,
        // ${VAR:?…} and ${VAR:-default} as the operator fills them in.
        v
          .replace(/^\$\{ENCRYPTION_KEY:\?.*\}$/, 'a'.repeat(64))
          .replace(/^\$\{ADMIN_TOKEN:\?.*\}$/, 'operator-token-0123456789')
          .replace(/^\$\{[A-Z_]+:-(.*)\}$/, '$1'),
      ]),
    );
    const config = loadConfig({ ...env, DATA_DIR: '/nonexistent' });
    expect(config.mongoUrl).to.include('replicaSet=');
    expect(config.redisUrls).to.deep.equal(['redis://redis:6379']);
  });

  it('k8s: the Deployment and the Secret set only variables the node reads; MongoDB is a replica set', () => {
    const names = [...(container.env ?? []).map((e) => e.name), ...Object.keys(secret.stringData)];
    expect(names.filter((n) => !known.has(n))).to.deep.equal([]);
    expect(container.env!.find((e) => e.name === 'MONGO_URL')!.value).to.include('replicaSet=');
  });

  it('Dockerfile: installs from the lockfile, runs as a non-root user, and has a health check', () => {
    const dockerfile = read('deploy/Dockerfile');
    expect(dockerfile).to.match(/RUN npm ci\b/);
    expect(dockerfile).to.match(/^USER node$/m);
    expect(dockerfile).to.match(/^HEALTHCHECK /m);
    expect(dockerfile).to.match(/^CMD \["node", "dist\/main\.js"\]$/m);
  });
});
