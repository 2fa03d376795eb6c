import { expect } from 'chai';
import type { ApiResponse, RequestOptions, TestNode } from '../helpers/test-node.js';

/** Small helpers shared by the integration suites (not a test file itself). */

/** The response is the spec's error envelope with exactly this status and message. */
export function expectError(res: ApiResponse, status: number, message: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body?.success, res.text).to.equal(false);
  expect(res.body?.error?.message, res.text).to.equal(message);
}

/** The response succeeded with exactly this status. */
export function expectOk(res: ApiResponse, status = 200): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body?.success, res.text).to.equal(true);
}

/** The three ways of presenting a token (spec section 5); `query` is for WebSocket upgrades only. */
export type TokenForm = 'header' | 'bearer' | 'query';
/** The forms a plain HTTP request may use: a token in a URL is refused there (it would reach access logs). */
export const TOKEN_FORMS: readonly TokenForm[] = ['header', 'bearer'];

/** Sends `token` in the given form; the query form is appended to `path`. */
export function withToken(
  path: string,
  token: string,
  form: TokenForm,
  extra: RequestOptions = {},
): { path: string; options: RequestOptions } {
  if (form === 'header') return { path, options: { ...extra, token } };
  if (form === 'bearer') {
    return { path, options: { ...extra, headers: { ...extra.headers, authorization: `Bearer ${token}` } } };
  }
  const sep = path.includes('?') ? '&' : '?';
  return { path: `${path}${sep}token=${encodeURIComponent(token)}`, options: extra };
}

/** POST /api/instance/new with the given body (the raw response, whatever it is). */
export function createInstanceRaw(node: TestNode, accountToken: string, body: unknown, extra: RequestOptions = {}) {
  return node.api.post('/api/instance/new', body, { ...extra, token: accountToken });
}

/** Request options for a raw body and/or an explicit Content-Type. */
export function rawOptions(raw?: string, contentType?: string): RequestOptions {
  return {
    ...(raw !== undefined ? { raw } : {}),
    ...(contentType ? { headers: { 'content-type': contentType } } : {}),
  };
}

/** Names of the instances the token sees, in list order. */
export async function listNames(node: TestNode, token: string, query = ''): Promise<string[]> {
  const res = await node.api.get(`/api/instance/list${query}`, { token });
  // One unknown name asked alone is a 404, as in the hosted product.
  if (res.status === 404 && res.body?.error?.message === 'Instance not found') return [];
  expectOk(res);
  return (res.body.instances as { name: string }[]).map((i) => i.name);
}

export function getSettings(node: TestNode, instance: string, token: string | undefined, extra: RequestOptions = {}) {
  return node.api.get(`/api/instance/getSettings/${encodeURIComponent(instance)}`, { ...extra, token });
}

export function postSettings(
  node: TestNode,
  instance: string,
  token: string | undefined,
  body: unknown,
  extra: RequestOptions = {},
) {
  return node.api.post(`/api/instance/settings/${encodeURIComponent(instance)}`, body, { ...extra, token });
}

export const SETTINGS_FIELDS = [
  'autoRejectCalls',
  'callRejectMessage',
  'ignoreGroupMessages',
  'keepOnlineStatus',
  'autoReadMessages',
  'disableHistorySync',
  'ignoreStatus',
] as const;

/** Rate limits high enough that suites which are not about rate limiting never meet them. */
export const NO_RATE_LIMITS = { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '100000' };
