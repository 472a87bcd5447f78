/** The baseapp role: base entities, proxies, the client endpoint, persistence. */
export { BaseApp } from "./baseapp.ts";
