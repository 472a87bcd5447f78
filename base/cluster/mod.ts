/** The baseapp in the cluster: following the cellappmgr, the live baseapps, and the fence of its authority. */
export { BaseAuthority, heldBackPeers, HeldBackRoute } from "./base_fence.ts";
export { confirmedRequests, followMgr, LiveBaseApps } from "./base_membership.ts";
