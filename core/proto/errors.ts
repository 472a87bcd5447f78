/** The client protocol's error codes and the error a message that cannot be decoded raises. */

/** Error codes of the `error` message (the reply to any bad input). */
export const ErrorCode = {
  unknownMessage: 1,
  notLoggedIn: 2,
  malformed: 3,
  unknownMethod: 4,
  notExposed: 5,
  badArguments: 6,
  frameTooLarge: 7,
  tooFast: 8,
  noCell: 9,
  alreadyLoggedIn: 10,
  tooManyErrors: 11,
  badPosition: 12,
  textFrame: 13,
  serverError: 14,
  loggedInElsewhere: 15,
  rateLimited: 16,
  /** A call went to a cellapp that died before a backup held it, and was not carried out again (docs/faults.md, "Confirmed means durable"). */
  callLost: 17,
} as const;

/** One of the error codes. */
export type ErrorCodeValue = typeof ErrorCode[keyof typeof ErrorCode];

/** Raised for a message that cannot be decoded; `code` is the error code to answer with. */
export class ProtocolError extends Error {
  override name = "ProtocolError";
  constructor(readonly code: ErrorCodeValue, message: string, options?: ErrorOptions) {
    super(message, options);
  }
}
