/** Why a request on a channel did not get its reply. */

/** A request's reply was an error raised by the peer's handler. */
export class RemoteError extends Error {
  override name = "RemoteError";
}

/** A request got no reply in time. */
export class RequestTimeoutError extends Error {
  override name = "RequestTimeoutError";
}

/** The channel closed before the request was answered or while sending. */
export class ChannelClosedError extends Error {
  override name = "ChannelClosedError";
}
