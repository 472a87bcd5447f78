/** Logging in: accounts and the login guard, player entry, checkout routing, resume tokens and routes. */
export {
  type AccountRecord,
  Accounts,
  constantTimeEqual,
  hashPassword,
  type LoginAttempt,
  type LoginCheck,
  type LoginLimits,
  UNAVAILABLE,
} from "./accounts.ts";
export { checkOutRestored, releaseStale } from "./checkout_route.ts";
export { type LoginFailure, loginFailure } from "./login_failure.ts";
export { BasePlayerEntry } from "./player_entry.ts";
export { ResumeTokens } from "./resume_token.ts";
