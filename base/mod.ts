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
} from "./accounts.ts";
export { EntityStore, type StoredEntity } from "./storage.ts";
export type { BaseEntityApi, BaseScripts } from "./scripts.ts";
export { BaseScriptRuntime } from "./scripts.ts";
export type { Proxy } from "./proxy.ts";
export { type CheckoutHolder, type CheckoutRecord, Checkouts } from "./checkout.ts";
