/**
 * `GET /v1/capabilities` (spec §2.8): configured capability, not theoretical capability. Built once
 * at start from the configuration; a typed extension's short alias is listed only when exactly one
 * configured instance claims its name.
 */
import type { Route } from '../routes.js';
import type { AggregateContext } from './aggregate-context.js';
import { kindInfo, type ConfiguredProcessor, type ProcessorRegistry } from './configured-processors.js';
import { jsonBytesReply } from './json-body.js';
import { ACTIVE_REBUILD_STATES, listRebuilds } from '../../store/rebuilds.js';
import { rpcMethodCapabilities } from './rpc-method-capabilities.js';

export interface QueryExtensionMount {
  readonly processor: ConfiguredProcessor;
  readonly name: string;
  readonly basePath: string;
  /** Present only when this processor is the one configured instance claiming `name`. */
  readonly aliasPath?: string;
}

function isSoleClaimant(claimants: readonly { id: string }[], processor: { id: string }): boolean {
  return claimants.length === 1 && claimants[0]!.id === processor.id;
}

/** Every typed query extension of every configured processor, with its canonical and alias paths. */
export function queryExtensionMounts(processors: ProcessorRegistry): QueryExtensionMount[] {
  return processors.all.flatMap((processor) =>
    kindInfo(processor).queryExtensions.map((name) => ({
      processor,
      name,
      basePath: `/v1/processors/${processor.id}/query/${name}`,
      ...(isSoleClaimant(processors.claimants(name), processor) ? { aliasPath: `/v1/q/${name}` } : {}),
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
        ...rebuildingOf(context, processor),
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

/** A rebuild of the processor under way (spec §9.5): its replacement instance and state; absent when none. */
function rebuildingOf(context: AggregateContext, processor: ConfiguredProcessor): { rebuilding?: { rebuild: string; instance: string; state: string } } {
  const active = listRebuilds(context.store).find((record) => record.processor === processor.id && ACTIVE_REBUILD_STATES.has(record.state));
  return active ? { rebuilding: { rebuild: active.id, instance: active.instance, state: active.state } } : {};
}

export function capabilitiesRoutes(context: AggregateContext): Route[] {
  // Per request: a rebuild's promote changes a processor's instance, and a rebuild under way is listed.
  return [{ method: 'get', pattern: '/v1/capabilities', open: false, handler: () => jsonBytesReply(Buffer.from(JSON.stringify(capabilitiesBody(context)))) }];
}
