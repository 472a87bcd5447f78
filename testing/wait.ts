import { errorText } from "../core/errors.ts";

/** Polls `cond` until it returns a truthy value or `ms` pass; throws naming `what`. */
export async function waitFor<T>(
  what: string,
  cond: () => T | Promise<T>,
  ms = 5000,
  everyMs = 20,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (true) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${ms} ms waiting for ${what}${last ? `: ${errorText(last)}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Awaits `p` for at most `ms`, so that a test fails naming `what` instead of hanging. */
export async function within<T>(what: string, p: Promise<T>, ms = 5000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, rej) => {
        timer = setTimeout(() => rej(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
