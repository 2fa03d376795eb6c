import type { Middleware, Next } from 'koa';
import Router from '@koa/router';
import { BoundedMap } from '../util/bounded-map.js';
import type { AppContext, AppState } from './app-state.js';
import type { ApiRouter } from './api-router.js';
import { chained } from './chained.js';

type Step = (ctx: AppContext, next: Next) => Promise<unknown>;

/** Distinct leading-segment keys remembered; paths past the bound are still served, only matched anew. */
const CHAIN_KEYS = 1024;

/**
 * One middleware in front of every router: a request runs only the routers whose prefix its path is
 * under, and those without a prefix whose routes can start with its first segment, in their declared
 * order, instead of passing each of the ~40 routers' matching in turn. Prefixes match as the routers do:
 * whole segments, ignoring case. The chain depends only on the path's first segments (as many as the
 * longest prefix has), so it is found once per such key and then read from a bounded map.
 */
export function dispatchRouters(routers: ApiRouter[]): Middleware<AppState> & { routers: ApiRouter['koa'][] } {
  const entries: Entry[] = routers.map((router, index) => {
    const prefix = router.prefix.toLowerCase().replace(/\/+$/, '');
    return { index, prefix, under: `${prefix}/`, heads: prefix === '' ? router.heads : undefined, koa: router.koa };
  });
  const depth = Math.max(0, ...entries.map((e) => e.prefix.split('/').length - 1));
  /** The chained steps per distinct set of candidate routers (a handful of prefixes in practice). */
  const chains = new Map<string, Step>();
  /** The steps per run of same-prefix routers, shared by the chains that contain the run. */
  const runSteps = new Map<string, Step[]>();
  const byKey = new BoundedMap<string, Step>(CHAIN_KEYS);

  const chainOf = (key: string): Step => {
    const head = firstSegment(key);
    const candidates = entries.filter((e) =>
      e.prefix === '' ? e.heads === undefined || e.heads.has(head) : key === e.prefix || key.startsWith(e.under),
    );
    const id = candidates.map((e) => e.index).join(',');
    let chain = chains.get(id);
    if (!chain) {
      chain = chained(
        samePrefixRuns(candidates).flatMap((run) => {
          const runId = run.map((e) => e.index).join(',');
          let steps = runSteps.get(runId);
          if (!steps) {
            steps = stepsOf(run);
            runSteps.set(runId, steps);
          }
          return steps;
        }),
      );
      chains.set(id, chain);
    }
    return chain;
  };

  const dispatch: Middleware<AppState> = (ctx, next) => {
    const key = leadingSegments(ctx.path, depth).toLowerCase();
    let chain = byKey.get(key);
    if (!chain) {
      chain = chainOf(key);
      byKey.set(key, chain);
    }
    return chain(ctx, next);
  };
  // What is mounted stays inspectable (the OpenAPI test lists every route of every router).
  return Object.assign(dispatch, { routers: routers.map((r) => r.koa) });
}

interface Entry {
  index: number;
  prefix: string;
  under: string;
  /** Without a prefix: the first segments its routes can match (undefined: any). */
  heads: ReadonlySet<string> | undefined;
  koa: ApiRouter['koa'];
}

/**
 * The routes of one router without a prefix, mounted on their own (the health check, ahead of the rate
 * limit): a request whose first segment none of its routes can match passes by without being matched.
 */
export function routesUnderHeads(router: ApiRouter): Middleware<AppState> & { router: ApiRouter['koa'] } {
  const { heads } = router;
  const routes = router.koa.routes() as unknown as Step;
  const guarded: Middleware<AppState> =
    heads === undefined
      ? routes
      : (ctx, next) => (heads.has(firstSegment(ctx.path).toLowerCase()) ? routes(ctx, next) : next());
  // What is mounted stays inspectable, as a router's own middleware is (the OpenAPI test lists its routes).
  return Object.assign(guarded, { router: router.koa });
}

/** `/a/b/c` → `a`; `/` → ''. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return path.slice(1, end === -1 ? undefined : end);
}

/** Runs of adjacent candidates that share a prefix (several routers declare `/api/chat`, say). */
function samePrefixRuns(candidates: Entry[]): Entry[][] {
  const runs: Entry[][] = [];
  for (const e of candidates) {
    const last = runs.at(-1);
    if (last !== undefined && last[0]!.prefix === e.prefix) last.push(e);
    else runs.push([e]);
  }
  return runs;
}

/**
 * The steps of a run: its one router's, or one router holding the run's routes in their order, so that a
 * request is matched once per run instead of once per router (the same routes, the same Allow header).
 */
function stepsOf(run: Entry[]): Step[] {
  const only = run.length === 1 ? run[0]!.koa : undefined;
  const router = only ?? new Router<AppState>();
  if (only === undefined) for (const e of run) router.use(e.koa.routes());
  return [router.routes(), router.allowedMethods()] as unknown as Step[];
}

/** `/a/b/c/d` with depth 2 → `/a/b`: the part of a path that decides which prefixes it is under. */
function leadingSegments(path: string, depth: number): string {
  let end = 0;
  for (let n = 0; n < depth; n++) {
    end = path.indexOf('/', end + 1);
    if (end === -1) return path;
  }
  return path.slice(0, end);
}
