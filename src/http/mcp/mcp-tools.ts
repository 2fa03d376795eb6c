import type { DeclaredRoute } from '../api-router.js';
import { jsonSchema } from '../openapi/openapi-document.js';
import type { JsonSchema } from '../openapi/openapi-document.js';

/**
 * The MCP tools: one per API operation, generated from the route declarations (`ApiRouter`) — name,
 * description, and an input schema made of the route's body and query schemas plus `instance` — so that
 * the tools can never drift from the REST API. A tool call is the REST call (mcp-routes.ts).
 *
 * Names follow the hosted product's MCP tools: `send_<kind>` for the sends (`send_text`, `send_media`,
 * `send_buttons`, `send_list`…), `<area>_<action>` for the rest (`group_list`, `instance_logout`,
 * `chat_presence`…), with the hosted product's own names where they differ (`instance_create`,
 * `group_update_participants`, `webhook_set`…). The generic name of a renamed tool, and any name with the
 * `ryzeapi_` prefix agents add, are accepted as aliases when called.
 */

export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** Other names the tool answers to when called (not listed). */
  aliases: string[];
  method: string;
  /** The route's path, `:instance` where the instance goes. */
  path: string;
  /** The route takes `:instance`: the `instance` argument is required. */
  needsInstance: boolean;
  /** Arguments sent in the query string; every other one (but `instance`) goes in the JSON body. */
  queryFields: Set<string>;
  /** The route reads a JSON body. */
  hasBody: boolean;
}

/** Paths that are not API operations of an instance (operator, account, sandbox, documents, aliases of other tools). */
const EXCLUDED = [
  '/api/admin/',
  '/api/account/',
  '/api/sandbox/',
  '/api/cluster/',
  // The same operations under the hosted product's names (`/api/chatwoot/`, `/api/chatbot/`) are the tools.
  '/api/helpdesk/',
  '/api/typebot/',
];

/** The hosted product's names where the generic `<area>_<action>` differs (`method path` → name). */
const HOSTED_NAMES: Record<string, string> = {
  'post /api/instance/new': 'instance_create',
  'post /api/group/participants/:instance': 'group_update_participants',
  'post /api/events/webhook/:instance': 'webhook_set',
  'get /api/events/getwebhook/:instance': 'webhook_get',
  'delete /api/events/webhook/:instance': 'webhook_delete',
  'post /api/events/websocket/:instance': 'websocket_set',
  'get /api/events/getwebsocket/:instance': 'websocket_get',
  'get /api/instance/getsettings/:instance': 'instance_get_settings',
  'post /api/instance/settings/:instance': 'instance_set_settings',
  'get /api/instance/getproxy/:instance': 'instance_get_proxy',
  'post /api/instance/proxy/:instance': 'instance_set_proxy',
  'get /api/instance/gets3/:instance': 'instance_get_s3',
  'post /api/instance/s3/:instance': 'instance_set_s3',
  'get /api/chat/tag/:instance': 'label_list',
  'post /api/chat/tag/:instance': 'label_create',
  'delete /api/chat/tag/:instance': 'label_delete',
  'post /api/chat/assigntag/:instance': 'label_assign',
  'delete /api/chat/assigntag/:instance': 'label_unassign',
  'post /api/profile/privacy/:instance': 'profile_set_privacy',
  'get /api/profile/getprivacy/:instance': 'profile_get_privacy',
  'post /api/profile/account/:instance': 'profile_update',
  'get /api/profile/getaccount/:instance': 'profile_get',
};

/** Sends whose tool is `send_<kind>`; the other message routes are `message_<op>`. */
const NOT_SENDS = new Set(['edit', 'forward', 'delete']);

const snake = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toLowerCase();

/** The routes that are tools: `/api/<area>/<action>/:instance`, and the account's instance list and creation. */
function isOperation(route: DeclaredRoute): boolean {
  const { fullPath, spec } = route;
  if (spec.auth === 'public') return false;
  const access = spec.auth.access;
  if (access === 'global' || access === 'metrics' || access === 'account-scope') return false;
  if (!fullPath.startsWith('/api/') || EXCLUDED.some((p) => fullPath.startsWith(p))) return false;
  if (fullPath.endsWith('/')) return false;
  return (
    /^\/api\/[A-Za-z]+\/[A-Za-z0-9-]+\/:instance$/.test(fullPath) || /^\/api\/instance\/(list|new)$/.test(fullPath)
  );
}

/** `<area>_<action>` (or `send_<kind>`) of a route, before the method is told apart. */
function baseName(fullPath: string): string {
  const [, area = '', action = ''] = fullPath.split('/').slice(1);
  if (area === 'message') return NOT_SENDS.has(action) ? `message_${action}` : `send_${snake(action)}`;
  return `${snake(area)}_${snake(action)}`;
}

/** The tools of these routes, in their declared order; the first route of a name wins. */
export function mcpTools(routes: readonly DeclaredRoute[]): McpTool[] {
  const operations = routes.filter(isOperation);
  const methodsOf = new Map<string, Set<string>>();
  for (const r of operations) {
    const key = r.fullPath.toLowerCase();
    methodsOf.set(key, (methodsOf.get(key) ?? new Set()).add(r.spec.method));
  }
  const tools = new Map<string, McpTool>();
  for (const route of operations) {
    const { method } = route.spec;
    const key = route.fullPath.toLowerCase();
    const methods = methodsOf.get(key)!;
    // PUT beside POST, and DELETE beside POST of the same operation (logout), are the same tool.
    if (method === 'put' && methods.has('post')) continue;
    const generic =
      baseName(route.fullPath) +
      (methods.size > 1 && method === 'get' ? '_get' : '') +
      (methods.size > 1 && method === 'delete' && !key.endsWith('/logout/:instance') ? '_delete' : '');
    if (method === 'delete' && key.endsWith('/logout/:instance') && methods.has('post')) continue;
    const hosted = HOSTED_NAMES[`${method} ${key}`];
    const name = hosted ?? generic;
    if (tools.has(name)) continue;
    tools.set(name, toolOf(route, name, hosted && hosted !== generic ? [generic] : []));
  }
  return [...tools.values()];
}

function toolOf(route: DeclaredRoute, name: string, aliases: string[]): McpTool {
  const { spec, fullPath } = route;
  const needsInstance = fullPath.includes(':instance');
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  if (needsInstance) {
    properties.instance = { type: 'string', description: 'The instance name' };
    required.push('instance');
  }
  const queryFields = new Set<string>();
  if (spec.query) {
    const schema = jsonSchema(spec.query);
    for (const [field, prop] of Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {})) {
      properties[field] = prop;
      queryFields.add(field);
    }
  }
  const body = spec.body ?? spec.rawBody;
  if (body) {
    const schema = jsonSchema(body);
    for (const [field, prop] of Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {})) {
      if (!queryFields.has(field) && field !== 'instance') properties[field] = prop;
    }
  }
  const description = [
    spec.summary,
    spec.description,
    `REST: ${spec.method.toUpperCase()} ${fullPath}. The result is the REST answer.`,
  ]
    .filter(Boolean)
    .join(' ');
  return {
    name,
    description,
    // Fields the REST body takes beyond these (the hosted product's spellings) are passed on as well.
    inputSchema: { type: 'object', properties, required, additionalProperties: true },
    aliases,
    method: spec.method.toUpperCase(),
    path: fullPath,
    needsInstance,
    queryFields,
    hasBody: body !== undefined,
  };
}

/** The prefix agents put before the hosted product's tool names. */
const AGENT_PREFIX = 'ryzeapi_';

/** The tool a call names: by its name, an alias, or either with the agents' `ryzeapi_` prefix. */
export function findTool(tools: readonly McpTool[], called: string): McpTool | undefined {
  const name = called.startsWith(AGENT_PREFIX) ? called.slice(AGENT_PREFIX.length) : called;
  return tools.find((t) => t.name === name) ?? tools.find((t) => t.aliases.includes(name));
}
