/** The baseapp role: base entities, proxies, the client endpoint, persistence. */
export { BaseApp } from "./baseapp.ts";
export { type BaseAppOptions, DEFAULT_LIMITS } from "./baseapp_options.ts";
export {
  type AccountRecord,
  Accounts,
  constantTimeEqual,
  hashPassword,
  type LoginAttempt,
  type LoginCheck,
} from "./login/accounts.ts";
export { EntityStore, type StoredEntity } from "./persist/storage.ts";
export type { BaseEntityApi, BaseScripts } from "./entity/scripts.ts";
export { BaseScriptRuntime } from "./entity/scripts.ts";
export type { Proxy } from "./entity/proxy.ts";
export { type CheckoutHolder, type CheckoutRecord, Checkouts } from "./persist/checkout.ts";
