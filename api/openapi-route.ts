/**
 * `GET /v1/openapi.json`: the normative OpenAPI document (api/openapi.yaml, spec §9.2) as JSON,
 * parsed once, on the first request (parsing costs ~250 ms of CPU, which every listener start would
 * otherwise pay). The YAML is read from the project's `api/` folder (tsc
 * does not copy it into dist/).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { Route } from './routes.js';

/** The document's path in the project (this module runs from dist/api/). */
export const OPENAPI_PATH = fileURLToPath(new URL('../../api/openapi.yaml', import.meta.url));

/** The parsed document (YAML anchors resolved into plain JSON). */
export function loadOpenApi(path = OPENAPI_PATH): Record<string, unknown> {
  return parse(readFileSync(path, 'utf8'), { maxAliasCount: 1000 }) as Record<string, unknown>;
}

export function openApiRoutes(): Route[] {
  let body: Buffer | null = null;
  return [{ method: 'get', pattern: '/v1/openapi.json', open: false, handler: () => ({ body: (body ??= Buffer.from(JSON.stringify(loadOpenApi()))), contentType: 'application/json' }) }];
}
