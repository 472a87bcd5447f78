/**
 * The cluster secret never crosses the wire: the accepting side sends a random
 * nonce and the connecting side answers with HMAC-SHA256(secret, nonce and
 * its identity), which the acceptor verifies in constant time.
 */

const keys = new Map<string, Promise<CryptoKey>>();
const enc = new TextEncoder();

function keyFor(secret: string): Promise<CryptoKey> {
  let k = keys.get(secret);
  if (!k) {
    k = crypto.subtle.importKey(
      "raw",
      enc.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      [
        "sign",
        "verify",
      ],
    );
    keys.set(secret, k);
  }
  return k;
}

function material(
  nonce: Uint8Array,
  role: string,
  pid: number,
  address: string,
): Uint8Array<ArrayBuffer> {
  const id = enc.encode(`\n${role}\n${pid}\n${address}`);
  const out = new Uint8Array(nonce.length + id.length);
  out.set(nonce);
  out.set(id, nonce.length);
  return out;
}

/** The proof that a connecting process knows the cluster secret. */
export async function makeProof(
  secret: string,
  nonce: Uint8Array,
  role: string,
  pid: number,
  address: string,
): Promise<Uint8Array> {
  const sig = await crypto.subtle.sign(
    "HMAC",
    await keyFor(secret),
    material(nonce, role, pid, address),
  );
  return new Uint8Array(sig);
}

/** Checks a proof made by `makeProof` with the same secret, nonce and identity. */
export async function verifyProof(
  secret: string,
  nonce: Uint8Array,
  role: string,
  pid: number,
  address: string,
  proof: Uint8Array,
): Promise<boolean> {
  return await crypto.subtle.verify(
    "HMAC",
    await keyFor(secret),
    new Uint8Array(proof),
    material(nonce, role, pid, address),
  );
}
