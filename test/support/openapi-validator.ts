/**
 * A response validator built from the normative OpenAPI document (api/openapi.yaml): finds the
 * documented operation of a request (path template + method), checks the status is one it
 * documents, and validates a JSON body with Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1)
 * against that response's schema. Records which operations were exercised with which statuses.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { join } from 'node:path';
import { loadOpenApi } from '../../api/openapi-route.js';
import { PROJECT_ROOT } from './paths.js';

type Json = Record<string, unknown>;

interface Operation {
  readonly template: string;
  readonly method: string;
  readonly pattern: RegExp;
  /** Literal segments count: the more, the more specific the template. */
  readonly literals: number;
  readonly responses: Json;
}

export interface ResponseCheck {
  readonly operation: string;
  readonly problems: string[];
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiValidator {
  readonly document: Json;
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly compiled = new Map<string, ValidateFunction>();
  /** `METHOD template` → statuses seen. */
  readonly exercised = new Map<string, Set<string>>();

  constructor(document: Json = loadOpenApi(join(PROJECT_ROOT, 'api', 'openapi.yaml'))) {
    this.document = document;
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    this.ajv.addFormat('date-time', (value: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)));
    this.ajv.addSchema({ ...document, $id: 'openapi.json' });
    const paths = document.paths as Record<string, Json>;
    for (const [template, item] of Object.entries(paths)) {
      const segments = template.split('/');
      const pattern = new RegExp(`^${segments.map((s) => (/^\{.+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}$`);
      const literals = segments.filter((s) => !/^\{.+\}$/.test(s)).length;
      for (const method of ['get', 'post', 'put', 'delete', 'patch']) {
        const op = item[method] as Json | undefined;
        if (op) this.operations.push({ template, method, pattern, literals, responses: op.responses as Json });
      }
    }
  }

  /** Every documented operation as `METHOD template`. */
  operationNames(): string[] {
    return this.operations.map((o) => `${o.method.toUpperCase()} ${o.template}`);
  }

  private find(method: string, path: string): Operation | undefined {
    return this.operations.filter((o) => o.method === method.toLowerCase() && o.pattern.test(path)).sort((a, b) => b.literals - a.literals)[0];
  }

  /** Follows a `$ref` to components/responses. */
  private resolveResponse(response: Json): { response: Json; pointer: string | null } {
    const ref = response.$ref;
    if (typeof ref !== 'string') return { response, pointer: null };
    const name = ref.replace('#/components/responses/', '');
    return { response: (this.document.components as { responses: Record<string, Json> }).responses[name]!, pointer: `#/components/responses/${escapePointer(name)}` };
  }

  check(method: string, url: string, status: number, contentType: string | null, body: string): ResponseCheck {
    const path = new URL(url, 'http://x').pathname;
    const op = this.find(method, path);
    if (!op) {
      // Not a documented operation: an unknown path is 404 NotFound, a known path with another method 405 MethodNotAllowed.
      const known = this.operations.some((o) => o.pattern.test(path));
      const [expected, response] = known ? [405, 'MethodNotAllowed'] : [404, 'NotFound'];
      if (status !== expected) return { operation: `${method} ${path}`, problems: [`${method} ${path} is not a documented operation and answered ${status}, not ${expected}`] };
      return this.checkBody(`${method} ${path}`, status, { $ref: `#/components/responses/${response}` }, null, contentType, body);
    }
    const name = `${op.method.toUpperCase()} ${op.template}`;
    if (!this.exercised.has(name)) this.exercised.set(name, new Set());
    this.exercised.get(name)!.add(String(status));
    const declared = op.responses[String(status)] as Json | undefined;
    if (!declared) return { operation: name, problems: [`${name} answered ${status}, which the document does not list (${Object.keys(op.responses).join(', ')})`] };
    return this.checkBody(name, status, declared, op, contentType, body);
  }

  private checkBody(name: string, status: number, declared: Json, op: Operation | null, contentType: string | null, body: string): ResponseCheck {
    const problems: string[] = [];
    const { response, pointer } = this.resolveResponse(declared);
    const content = response.content as Record<string, Json> | undefined;
    if (!content) {
      if (body.length > 0) problems.push(`${name} ${status}: the document gives no body, the node sent ${body.length} bytes`);
      return { operation: name, problems };
    }
    const mediaType = (contentType ?? '').split(';')[0]!.trim();
    if (!Object.hasOwn(content, mediaType)) return { operation: name, problems: [`${name} ${status}: content-type ${mediaType} is not documented (${Object.keys(content).join(', ')})`] };
    if (mediaType !== 'application/json') return { operation: name, problems };
    const base = pointer ?? `#/paths/${escapePointer(op!.template)}/${op!.method}/responses/${status}`;
    const ref = `openapi.json${base}/content/application~1json/schema`;
    let validate = this.compiled.get(ref);
    if (!validate) {
      validate = this.ajv.compile({ $ref: ref });
      this.compiled.set(ref, validate);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { operation: name, problems: [`${name} ${status}: the body is not JSON`] };
    }
    if (!validate(parsed)) {
      for (const error of validate.errors ?? []) problems.push(`${name} ${status}: ${error.instancePath || '(body)'} ${error.message} ${JSON.stringify(error.params)}`);
    }
    return { operation: name, problems };
  }
}
