/**
 * `GET /v1/capabilities` (spec §2.8): configured capability, not theoretical capability. Built once
 * at start from the configuration; a typed extension's short alias is listed only when exactly one
 * configured instance claims its name.
 */
import type { Route } from '../routes.js';
import type { AggregateContext } from './aggregate-context.js';
import { kindInfo, type ConfiguredProcessor, type ProcessorRegistry } from './configured-processors.js';
import { jsonBytesReply } from './json-body.js';
import { rpcMethodCapabilities } from './rpc-method-capabilities.js';

export interface QueryExtensionMount {
  readonly processor: ConfiguredProcessor;
  readonly name: string;
  readonly basePath: string;
  /** Present only when this processor is the one configured instance claiming `name`. */
  readonly aliasPath?: string;
}

/** Every typed query extension of every configured processor, with its canonical and alias paths. */
export function queryExtensionMounts(processors: ProcessorRegistry): QueryExtensionMount[] {
  return processors.all.flatMap((processor) =>
    kindInfo(processor).queryExtensions.map((name) => ({
      processor,
      name,
      basePath: `/v1/processors/${processor.id}/query/${name}`,
      ...(processors.claimants(name).length === 1 ? { aliasPath: `/v1/q/${name}` } : {}),
    })),
  );
}

export function capabilitiesBody(context: AggregateContext): unknown {
  return {
    chainId: context.chainId,
    ethereumRpc: {
      http: `http://${context.rpc.http}`,
      webSocket: `ws://${context.rpc.webSocket}`,
      methods: rpcMethodCapabilities(context.rpc.limits ?? null, context.rpc.history ?? null),
      ...(context.rpc.limits ? { limits: context.rpc.limits } : {}),
    },
    processors: context.processors.all.map((processor) => {
      const info = kindInfo(processor);
      return {
        id: processor.id,
        instance: processor.instance,
        version: info.version,
        genericApi: info.genericApi,
        changeSchema: info.changeSchema,
        queryExtensions: info.queryExtensions,
        subscriptions: processor.delivery,
        artifactRetention: processor.artifacts?.retention ?? 'none',
        deliveryOrdering: info.deliveryOrdering,
      };
    }),
    queryExtensions: queryExtensionMounts(context.processors).map((mount) => ({
      processor: mount.processor.instance,
      id: mount.name,
      basePath: mount.basePath,
      ...(mount.aliasPath ? { aliasPath: mount.aliasPath } : {}),
    })),
  };
}

export function capabilitiesRoutes(context: AggregateContext): Route[] {
  const body = Buffer.from(JSON.stringify(capabilitiesBody(context)));
  return [{ method: 'get', pattern: '/v1/capabilities', open: false, handler: () => jsonBytesReply(body) }];
}
