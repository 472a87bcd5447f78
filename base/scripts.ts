/** What base-side game code sees of a base entity, and how it is registered. */

/** A base entity as its script sees it. */
export interface BaseEntityApi {
  readonly id: number;
  readonly typeName: string;
  /** The base properties; setting one is checked, and BASE_AND_CLIENT ones reach the own client. */
  readonly props: Record<string, unknown>;
  /** True while a client is attached. */
  readonly hasClient: boolean;
  /** Calls a client method on the entity's own client (dropped without a client). */
  callClient(method: string, ...args: unknown[]): void;
  /** Writes the entity to the database, destroys its cell part and disconnects its client. */
  logout(): Promise<void>;
}

/** A base method: the entity, then the arguments as declared. */
// deno-lint-ignore no-explicit-any
export type BaseMethodHandler = (self: BaseEntityApi, ...args: any[]) => void | Promise<void>;

/** Base methods by entity type name, then method name. */
export type BaseScripts = Readonly<Record<string, Readonly<Record<string, BaseMethodHandler>>>>;
