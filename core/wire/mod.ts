/** Inter-process wire: frames, channels, the message catalog, request/reply. */
export * from "./catalog.ts";
export * from "./channel.ts";
export * from "./client_records.ts";
export * from "./endpoint.ts";
export * from "./frame.ts";
export * from "./messages.ts";
export * from "./outbox.ts";
export * as check from "./check.ts";
export * from "./member.ts";
export * from "./mgr_interface.ts";
export * from "./cell_interface.ts";
export * from "./base_interface.ts";
export * from "./backup_interface.ts";
export * from "./peers.ts";
export * from "./base_backup_interface.ts";
export * from "./metrics.ts";
export * from "./base_script_interface.ts";
export * from "./player_interface.ts";
