/**
 * The client SDK for browsers and Deno: `connect(url, credentials, {registry})`
 * logs in to a baseapp and gives a Client with the player, the entities in its
 * AOI (through the world model), events, exposed method calls and movement.
 *
 * @module
 */
export { Client, connect } from "./client.ts";
export { type ConnectOptions, type Credentials, LoginError } from "./login.ts";
export { PlayerEntity } from "./player.ts";
export type { ClientStats } from "./transport.ts";
export {
  type CachedEntity,
  type ClientEntity,
  ClientWorld,
  type ClientWorldOptions,
  type WorldEvents,
} from "./world.ts";
export { WorldEmitter, type WorldListener } from "./world_emitter.ts";
export type { ResumeOptions } from "./resume.ts";
export { type ClientEvents, Emitter, type EntityView, type PropertyUpdate, type Vec3 } from "./events.ts";
export { packedAxisError, positionErrorBound } from "./position.ts";
export { type AoiDecodeContext, ErrorCode, NO_ALIAS } from "../core/proto/mod.ts";
// What the objects above carry: the entity definitions (all of `@seamless/server/defs`) and property containers.
export * from "../defs.ts";
export { PropertyContainer } from "../core/def/mod.ts";
export type { ChangeRecord, ChangeSink, ContainerOptions, Scope, TrackOwner } from "../core/def/mod.ts";
