/** The baseapp's persistence: the entity store, saves and autosave, held ids, account checkouts, database retries. */
export { Autosave, DEFAULT_AUTOSAVE_SEC, type Savable } from "./autosave.ts";
export { BaseSaves, type SavedBase } from "./base_saves.ts";
export { type CheckoutHolder, type CheckoutRecord, Checkouts, describeCheckout } from "./checkout.ts";
export { heldIdHighWater, holdId } from "./held_ids.ts";
export { withKvRetry } from "./kv_retry.ts";
export { EntityStore, type StoredEntity } from "./storage.ts";
