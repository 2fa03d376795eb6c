import type { Middleware, Next } from 'koa';
import type { AppContext, AppState } from './app-state.js';
import type { ApiRouter } from './api-router.js';

type Step = (ctx: AppContext, next: Next) => Promise<unknown>;

/**
 * One middleware in front of every router: a request runs only the routers whose prefix its path is
 * under (and those without a prefix), in their declared order, instead of passing each of the ~40
 * routers' matching in turn. Prefixes match as the routers do: whole segments, ignoring case.
 */
export function dispatchRouters(routers: ApiRouter[]): Middleware<AppState> & { routers: ApiRouter['koa'][] } {
  const entries = routers.map((router, index) => ({
    index,
    prefix: router.prefix.toLowerCase().replace(/\/+$/, ''),
    steps: [router.koa.routes(), router.koa.allowedMethods()] as unknown as Step[],
  }));
  /** The chain of steps per distinct set of candidate routers (a handful of prefixes in practice). */
  const chains = new Map<string, Step[]>();

  const chainFor = (path: string): Step[] => {
    const lower = path.toLowerCase();
    const candidates = entries.filter((e) => e.prefix === '' || lower === e.prefix || lower.startsWith(`${e.prefix}/`));
    const key = candidates.map((e) => e.index).join(',');
    let chain = chains.get(key);
    if (!chain) {
      chain = candidates.flatMap((e) => e.steps);
      chains.set(key, chain);
    }
    return chain;
  };

  const dispatch: Middleware<AppState> = async (ctx, next) => {
    const chain = chainFor(ctx.path);
    const run = async (i: number): Promise<void> => {
      if (i === chain.length) {
        await next();
        return;
      }
      await chain[i]!(ctx, () => run(i + 1));
    };
    await run(0);
  };
  // What is mounted stays inspectable (the OpenAPI test lists every route of every router).
  return Object.assign(dispatch, { routers: routers.map((r) => r.koa) });
}
