import type { Next } from 'koa';

/** A Koa-style step: the context, and the rest of the chain as `next`. */
export type ChainStep<C> = (ctx: C, next: Next) => unknown;

/**
 * Steps as one middleware, chained here once rather than composed on every request: each step is given
 * the rest as its `next`, the last one the caller's own `next`.
 */
export function chained<C>(steps: readonly ChainStep<C>[]): (ctx: C, next: Next) => Promise<unknown> {
  return steps.reduceRight<(ctx: C, next: Next) => Promise<unknown>>(
    (rest, step) => (ctx, next) => Promise.resolve(step(ctx, () => rest(ctx, next))),
    (_ctx, next) => next(),
  );
}
