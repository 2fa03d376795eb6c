import type { Socket } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ApiRouter } from '../api-router.js';
import type { DeclaredRoute, RouteContext } from '../api-router.js';
import { requireAccountOrInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { loopback } from './loopback.js';
import { findTool, mcpTools } from './mcp-tools.js';
import type { McpTool } from './mcp-tools.js';

interface Deps {
  auth: Authenticator;
  maxBodyBytes: number;
  /** Every declared route of the node, read once on the first MCP request (the tools are made from them). */
  routes: () => readonly DeclaredRoute[];
  version: string;
}

/** A JSON-RPC message as the document shows it (the SDK's transport checks it). */
const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal('2.0').optional().describe('Always "2.0"'),
  id: z.union([z.string(), z.number()]).optional().describe('The request id (absent for a notification)'),
  method: z.string().optional().describe('initialize, notifications/initialized, tools/list, tools/call, ping…'),
  params: z.looseObject({}).optional(),
});

/** The headers a tool's REST call carries: the caller's token, and what the edge knew of the caller. */
function forwardedHeaders(ctx: RouteContext): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = ctx.get('token');
  const authorization = ctx.get('authorization');
  if (token) headers.token = token;
  else if (authorization) headers.authorization = authorization;
  // Behind a trusted proxy, the edge judged the caller by these; the call to ourselves keeps them.
  const encrypted = (ctx.req.socket as Socket & { encrypted?: boolean }).encrypted === true;
  if (ctx.secure && !encrypted) headers['x-forwarded-proto'] = 'https';
  if (ctx.app.proxy) headers['x-forwarded-for'] = ctx.ip;
  const requestId = ctx.get('x-request-id');
  if (requestId) headers['x-request-id'] = requestId;
  return headers;
}

/** A value as a query-string parameter. */
const queryValue = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) ? v.join(',') : JSON.stringify(v));

/** Runs a tool: its REST call on this node, the REST answer as the result (an error answer is a tool error). */
async function callTool(ctx: RouteContext, tool: McpTool, args: Record<string, unknown>): Promise<CallToolResult> {
  const { instance, ...rest } = args;
  const name = typeof instance === 'string' ? instance.trim() : '';
  if (tool.needsInstance && name === '') {
    return { isError: true, content: [{ type: 'text', text: 'instance is required: the instance name' }] };
  }
  const path = tool.path.replace(':instance', encodeURIComponent(name));
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    if (tool.queryFields.has(field)) query.set(field, queryValue(value));
    else body[field] = value;
  }
  const qs = query.toString();
  const answer = await loopback(ctx.req.socket, {
    method: tool.method,
    path: qs ? `${path}?${qs}` : path,
    headers: forwardedHeaders(ctx),
    ...(tool.hasBody ? { body } : {}),
  });
  const failed = answer.status >= 400;
  const structured =
    typeof answer.body === 'object' && answer.body !== null && !Array.isArray(answer.body)
      ? (answer.body as Record<string, unknown>)
      : { status: answer.status, body: answer.body };
  return {
    ...(failed ? { isError: true } : {}),
    content: [{ type: 'text', text: JSON.stringify(answer.body ?? { status: answer.status }) }],
    structuredContent: failed ? { httpStatus: answer.status, ...structured } : structured,
  };
}

/**
 * The MCP endpoint (Model Context Protocol, Streamable HTTP, stateless): `POST /mcp` with the API's tokens
 * and rate limit. Its tools are the API's operations (mcp-tools.ts); a call is the REST call made to this
 * node, so it reaches the instance through the cluster router like any request, and its result is the
 * REST answer. Answers come as JSON, or as an event stream to a client that asks only for one.
 */
export function mcpRoutes(deps: Deps) {
  const api = new ApiRouter({ tag: 'MCP', maxBodyBytes: deps.maxBodyBytes });
  let tools: McpTool[] | undefined;
  const toolsOf = () => (tools ??= mcpTools(deps.routes()));

  api.route(
    {
      method: 'post',
      path: '/mcp',
      summary: 'MCP (Model Context Protocol) over Streamable HTTP: one tool per API operation',
      description:
        'JSON-RPC 2.0: `initialize`, `notifications/initialized`, `tools/list`, `tools/call`. Stateless (no session id). ' +
        'Tools take the REST body and query fields flat, plus `instance`; their result is the REST answer. ' +
        'The answer is JSON, or an event stream when the client accepts only `text/event-stream`.',
      auth: requireAccountOrInstance(deps.auth),
      rawBody: jsonRpcMessage,
      responses: {
        200: 'The JSON-RPC answer (JSON or an event stream)',
        202: 'A notification, accepted',
        406: 'The client accepts neither JSON nor an event stream',
      },
    },
    async (ctx, { body }) => {
      const server = new McpServer(
        { name: 'switchboard', version: deps.version },
        { capabilities: { tools: { listChanged: false } } },
      );
      server.server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: toolsOf().map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      }));
      server.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
        const tool = findTool(toolsOf(), request.params.name);
        if (!tool) {
          return { isError: true, content: [{ type: 'text', text: `Unknown tool: ${request.params.name}` }] };
        }
        try {
          return await callTool(ctx, tool, request.params.arguments ?? {});
        } catch (err) {
          ctx.state.log.warn({ err, tool: tool.name }, 'MCP tool call failed');
          return { isError: true, content: [{ type: 'text', text: 'The call could not be made; try again' }] };
        }
      });
      // JSON unless the client accepts only an event stream; the SDK wants both named, so both are.
      const accept = ctx.get('accept');
      const json = !/text\/event-stream/i.test(accept) || /application\/json/i.test(accept);
      ctx.req.headers.accept = 'application/json, text/event-stream';
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: json });
      ctx.res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      ctx.respond = false;
      await transport.handleRequest(ctx.req, ctx.res, body);
    },
  );

  // Stateless: no stream to open or session to end.
  for (const method of ['get', 'delete'] as const) {
    api.route(
      {
        method,
        path: '/mcp',
        summary: `MCP ${method.toUpperCase()} (not used: the endpoint is stateless)`,
        auth: requireAccountOrInstance(deps.auth),
        responses: { 405: 'Method not allowed' },
      },
      (ctx) => {
        ctx.status = 405;
        ctx.set('Allow', 'POST');
        ctx.body = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null };
      },
    );
  }

  return api;
}
