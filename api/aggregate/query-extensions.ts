/**
 * Mounts every configured kind's typed query extensions (spec §4.4): canonical under
 * `/v1/processors/{id}/query/<name>/…` (the named processor must claim `<name>`, else 404) and, when
 * exactly one configured instance claims the name, aliased under `/v1/q/<name>/…`.
 */
import { HttpError } from '../errors.js';
import type { Route } from '../routes.js';
import type { Handler } from '../http.js';
import type { AggregateContext } from './aggregate-context.js';
import { kindInfo, type ConfiguredProcessor } from './configured-processors.js';
import { collectionSnapshotReply } from './entities/query-and-follow-routes.js';
import { pathParamNames } from './kind-query-params.js';
import { KindQueryRequest } from './kind-query-request.js';
import type { QueryEndpoint, QueryExtension, TargetResolver } from './kind-surface.js';

export function canonicalTarget(context: AggregateContext, name: string): TargetResolver {
  return (request) => {
    const processor = context.processors.byId(request.params[0] ?? '');
    if (!kindInfo(processor).queryExtensions.includes(name)) {
      throw new HttpError('not_found', `processor '${processor.id}' has no '${name}' query extension`, { processor: processor.id });
    }
    return { processor, params: request.params.slice(1) };
  };
}

/** The alias serves the claimant's serving instance, resolved per request (a rebuild's promote moves it). */
export function aliasTarget(context: AggregateContext, processor: ConfiguredProcessor): TargetResolver {
  return (request) => ({ processor: context.processors.byId(processor.id), params: request.params });
}

/** A kind endpoint's route handler: a KindQueryRequest over the instance the request names. */
function endpointHandler(context: AggregateContext, target: TargetResolver, endpoint: QueryEndpoint): Handler {
  const mount = { context, names: pathParamNames(endpoint.path), collectionSnapshot: collectionSnapshotReply };
  return (request) => {
    const { processor, params } = target(request);
    return endpoint.handle(new KindQueryRequest(mount, processor, params, request.query));
  };
}

/** The extensions claimed by configured processors whose kinds the context serves, one per name. */
function servedExtensions(context: AggregateContext): QueryExtension[] {
  const byName = new Map<string, QueryExtension>();
  for (const processor of context.processors.all) {
    const surface = context.kinds?.get(processor.kind);
    for (const extension of surface?.queryExtensions ?? []) {
      if (kindInfo(processor).queryExtensions.includes(extension.name) && !byName.has(extension.name)) byName.set(extension.name, extension);
    }
  }
  return [...byName.values()];
}

export function queryExtensionRoutes(context: AggregateContext): Route[] {
  return servedExtensions(context).flatMap((extension) => {
    const mounts: Array<{ base: string; target: TargetResolver }> = [{ base: `/v1/processors/:processor/query/${extension.name}`, target: canonicalTarget(context, extension.name) }];
    const claimants = context.processors.claimants(extension.name);
    if (claimants.length === 1) mounts.push({ base: `/v1/q/${extension.name}`, target: aliasTarget(context, claimants[0]!) });
    return mounts.flatMap(({ base, target }) =>
      extension.endpoints.map((endpoint): Route => ({ method: 'get', pattern: `${base}${endpoint.path}`, open: false, handler: endpointHandler(context, target, endpoint) })),
    );
  });
}
