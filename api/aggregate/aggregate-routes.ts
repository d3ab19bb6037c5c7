/** Every aggregate route of spec §4.3–§4.4 this node serves over plain HTTP (the SSE stream is in api/sse/). */
import type { Route } from '../routes.js';
import type { AggregateContext } from './aggregate-context.js';
import { capabilitiesRoutes } from './capabilities.js';
import { checkpointRoutes } from './checkpoint-routes.js';
import { savepointRoutes } from './savepoint-routes.js';
import { artifactRoutes } from './artifact-routes.js';
import { artifactAdminRoutes } from '../admin/artifact-admin-routes.js';
import { changesRoutes } from './changes-routes.js';
import { storeChangeFeed } from './change-feed.js';
import { entitiesRoutes } from './entities/entities-routes.js';
import { queryAndFollowRoutes, readSnapshotPage } from './entities/query-and-follow-routes.js';
import { queryExtensionRoutes } from './query-extensions.js';
import { statusRoutes } from './status-routes.js';
import { openApiRoutes } from '../openapi-route.js';

export function aggregateRoutes(context: AggregateContext): Route[] {
  return [...statusRoutes(context), ...openApiRoutes(), ...capabilitiesRoutes(context), ...changesRoutes(context, storeChangeFeed(context.store, context.chainId)), ...queryExtensionRoutes(context), ...entitiesRoutes(context, readSnapshotPage(context)), ...queryAndFollowRoutes(context), ...checkpointRoutes(context), ...savepointRoutes(context), ...artifactRoutes(context), ...artifactAdminRoutes(context)];
}
