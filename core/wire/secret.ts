/**
 * The cluster secret never crosses the wire: each side sends a random nonce
 * and the other answers with HMAC-SHA256(secret, nonce, which message carries
 * the proof, and the prover's identity), verified in constant time. The
 * message name keeps a proof made for a hello from passing as a welcome's (a
 * stranger relaying one process's hello as its own welcome).
 */

/** The handshake message a proof travels in: the dialler's hello or the acceptor's welcome. */
export type ProofIn = "hello" | "welcome";

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
  carrier: ProofIn,
  role: string,
  pid: number,
  address: string,
): Uint8Array<ArrayBuffer> {
  const id = enc.encode(`\n${carrier}\n${role}\n${pid}\n${address}`);
  const out = new Uint8Array(nonce.length + id.length);
  out.set(nonce);
  out.set(id, nonce.length);
  return out;
}

/** The proof, sent in `carrier`, that a process knows the cluster secret. */
export async function makeProof(
  secret: string,
  nonce: Uint8Array,
  carrier: ProofIn,
  role: string,
  pid: number,
  address: string,
): Promise<Uint8Array> {
  const sig = await crypto.subtle.sign(
    "HMAC",
    await keyFor(secret),
    material(nonce, carrier, role, pid, address),
  );
  return new Uint8Array(sig);
}

/** Checks a proof made by `makeProof` with the same secret, nonce, carrier and identity. */
export async function verifyProof(
  secret: string,
  nonce: Uint8Array,
  carrier: ProofIn,
  role: string,
  pid: number,
  address: string,
  proof: Uint8Array,
): Promise<boolean> {
  return await crypto.subtle.verify(
    "HMAC",
    await keyFor(secret),
    new Uint8Array(proof),
    material(nonce, carrier, role, pid, address),
  );
}
