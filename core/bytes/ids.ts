/**
 * The largest entity id the cluster hands out: far below 2^53, so that ids
 * stay exact in every number they pass through, and far above any real use.
 */
export const MAX_ENTITY_ID = 2 ** 48;
