/** Base entities: proxies and base-only entities, their scripts, global data, and the client session of a proxy. */
export { createBaseHere } from "./base_only.ts";
export { ClientSession, type ResumeElsewhere, type SessionHost, type SessionLimits } from "./client_session.ts";
export { BaseGlobals } from "./global_data.ts";
export { type ClientLink, type MakeProxy, Proxy, type ProxyHost } from "./proxy.ts";
export { type BaseEntityApi, BaseScriptRuntime, type BaseScripts } from "./scripts.ts";
