/** Why a login failed, as the failed-login counter labels it. */
export type LoginFailure = "wrong_password" | "throttled" | "refused";

/** How a failed login's result is counted. */
export function loginFailure(res: { reason: string; retryAfterMs?: number }): LoginFailure {
  if (res.retryAfterMs !== undefined) return "throttled";
  return res.reason === "wrong password" ? "wrong_password" : "refused";
}
