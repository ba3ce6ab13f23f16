/**
 * @module
 * The tools/call takeover of route.ts on an SDK 2.x server (MCP 2026-07-28). There
 * the SDK answers a method with no handler as "Method not found" with HTTP 404, which
 * the protocol requires; route.ts's 1.x hook (the fallback handler) would catch every
 * unknown method and answer it in-band with 200. So here `tools/call` gets a handler
 * of its own whose params schema lets any params through to the router, which checks
 * and logs them exactly as on 1.x.
 */
import type { McpServer } from '@modelcontextprotocol/server';
import * as z from 'zod';
import { type LogRefusal, routeCall, type ToolExtra, type ToolRoute } from './route.js';

/** Any params at all: the router, not the SDK, refuses malformed ones (and logs the refusal). */
const ANY_PARAMS = z.unknown();

export function routeModernToolCalls<Name extends string>(
  server: McpServer,
  routes: ReadonlyMap<string, ToolRoute<Name>>,
  logRefusal: LogRefusal<Name>,
): void {
  server.server.setRequestHandler('tools/call', { params: ANY_PARAMS }, (params, ctx) =>
    routeCall(params, ctx as ToolExtra, routes, logRefusal),
  );
}
