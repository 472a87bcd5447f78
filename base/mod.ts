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
} from "./login/mod.ts";
export { type CheckoutHolder, type CheckoutRecord, Checkouts, EntityStore, type StoredEntity } from "./persist/mod.ts";
export { type BaseEntityApi, BaseScriptRuntime, type BaseScripts, type Proxy } from "./entity/mod.ts";
