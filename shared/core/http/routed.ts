// One Lambda for several rows of the route table: each request goes to the handler of its own row, by API Gateway's
// routeKey (`METHOD /path`, as the local server sets it too). Rows of one area then share a function, and the stack
// stays under CloudFormation's 500 resources (each function costs five: the function, its role, policy, log group
// and integration).
import type { Context } from 'aws-lambda';
import type { HttpEvent, HttpResult } from './context.ts';
import type { RouteSpec } from './route.ts';

type Lambda = (event: HttpEvent, context: Context) => Promise<HttpResult>;

export function routedHandler(rows: ReadonlyArray<readonly [RouteSpec, Lambda]>): Lambda {
  const byKey = new Map(rows.map(([route, fn]) => [`${route.method} ${route.path}`, fn]));
  return (event, context) => {
    const fn = byKey.get(event.routeKey);
    // A route the stack or the local server sent here that this file does not serve: a wiring mistake.
    if (!fn) throw new Error(`this function serves no route ${event.routeKey}`);
    return fn(event, context);
  };
}
