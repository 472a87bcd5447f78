/**
 * A throw-away PKI for TLS tests, made with the openssl command in a temp folder: a CA, a server certificate signed
 * by it for 127.0.0.1 and localhost, an expired one, one that is not yet valid, a key that matches none of them, and
 * a second CA with its own server certificate. Disposing the object removes the folder.
 */

/** Paths of the files made (PEM), and the SHA-256 of the server certificate's public key for Chromium. */
export interface TestCerts extends AsyncDisposable {
  dir: string;
  /** The CA's certificate. */
  ca: string;
  /** A server certificate signed by the CA, for 127.0.0.1, ::1 and localhost, and its key. */
  cert: string;
  key: string;
  /** Signed by the CA but expired yesterday, with its key. */
  expiredCert: string;
  expiredKey: string;
  /** Signed by the CA, valid only from tomorrow, with its key. */
  futureCert: string;
  futureKey: string;
  /** A key that belongs to no certificate here. */
  otherKey: string;
  /** A second, unrelated CA, and a server certificate it signed (same names) with its key. */
  otherCa: string;
  otherCert: string;
  otherCertKey: string;
  /** base64 SHA-256 of the server certificate's SubjectPublicKeyInfo (Chromium's --ignore-certificate-errors-spki-list). */
  spki: string;
}

/** True when the openssl command runs here. */
export async function haveOpenssl(): Promise<boolean> {
  try {
    return (await new Deno.Command("openssl", { args: ["version"], stdout: "null", stderr: "null" }).output()).success;
  } catch {
    return false;
  }
}

async function openssl(dir: string, args: string[], stdin?: string): Promise<Uint8Array> {
  const p = new Deno.Command("openssl", {
    args,
    cwd: dir,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  })
    .spawn();
  if (stdin !== undefined) {
    const w = p.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await p.output();
  if (!out.success) {
    throw new Error(`openssl ${args.join(" ")} failed in ${dir}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return out.stdout;
}

const SERVER_EXT = [
  "basicConstraints=CA:FALSE",
  "keyUsage=digitalSignature,keyEncipherment",
  "extendedKeyUsage=serverAuth,clientAuth",
  "subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost",
].join("\n");

/** Makes a CA (EC P-256) named `name`; returns its cert and key file names. */
async function makeCa(dir: string, name: string): Promise<{ cert: string; key: string }> {
  const key = `${name}.key`, cert = `${name}.pem`;
  await openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key]);
  await openssl(dir, [
    "req",
    "-x509",
    "-new",
    "-key",
    key,
    "-sha256",
    "-days",
    "30",
    "-subj",
    `/CN=${name}`,
    "-out",
    cert,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]); // deno-fmt-ignore
  return { cert, key };
}

/** Makes a key and a certificate for the test names, signed by `ca`, valid from `notBefore` to `notAfter`. */
async function makeServer(
  dir: string,
  name: string,
  ca: { cert: string; key: string },
  notBefore: Date,
  notAfter: Date,
): Promise<{ cert: string; key: string }> {
  const key = `${name}.key`, cert = `${name}.pem`, csr = `${name}.csr`, conf = `${name}.cnf`, db = `${name}.db`;
  await openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key]);
  await openssl(dir, ["req", "-new", "-key", key, "-subj", "/CN=localhost", "-out", csr]);
  await Deno.writeTextFile(`${dir}/${db}`, "");
  // `openssl ca` rather than `x509 -req`: OpenSSL 3.0's x509 cannot set the validity dates.
  await Deno.writeTextFile(
    `${dir}/${conf}`,
    `[ca]\ndefault_ca = d\n[d]\ndatabase = ${db}\nnew_certs_dir = .\nserial = ${name}.srl\n` +
      `default_md = sha256\npolicy = p\nunique_subject = no\ncopy_extensions = none\n[p]\ncommonName = supplied\n` +
      `[ext]\n${SERVER_EXT}\n`,
  );
  await Deno.writeTextFile(`${dir}/${name}.srl`, "1000\n");
  const stamp = (d: Date) => d.toISOString().replace(/[-:T]/g, "").slice(2, 14) + "Z";
  await openssl(dir, [
    "ca",
    "-batch",
    "-config",
    conf,
    "-cert",
    ca.cert,
    "-keyfile",
    ca.key,
    "-in",
    csr,
    "-out",
    cert,
    "-notext",
    "-startdate",
    stamp(notBefore),
    "-enddate",
    stamp(notAfter),
    "-extensions",
    "ext",
  ]); // deno-fmt-ignore
  return { cert, key };
}

/** Makes the test PKI in a new temp folder. */
export async function makeTestCerts(): Promise<TestCerts> {
  const dir = await Deno.makeTempDir({ prefix: "seamless-certs-" });
  try {
    const day = 86_400_000;
    const now = Date.now();
    const ca = await makeCa(dir, "ca");
    const server = await makeServer(dir, "server", ca, new Date(now - day), new Date(now + 20 * day));
    const expired = await makeServer(dir, "expired", ca, new Date(now - 3 * day), new Date(now - day));
    const future = await makeServer(dir, "future", ca, new Date(now + day), new Date(now + 3 * day));
    const other = await makeCa(dir, "other-ca");
    const otherServer = await makeServer(dir, "other-server", other, new Date(now - day), new Date(now + 20 * day));
    await openssl(dir, ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "stray.key"]);
    const der = await openssl(dir, ["x509", "-in", server.cert, "-pubkey", "-noout"]);
    const spkiDer = await openssl(dir, ["pkey", "-pubin", "-outform", "der"], new TextDecoder().decode(der));
    const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(spkiDer)));
    const p = (f: string) => `${dir}/${f}`;
    return {
      dir,
      ca: p(ca.cert),
      cert: p(server.cert),
      key: p(server.key),
      expiredCert: p(expired.cert),
      expiredKey: p(expired.key),
      futureCert: p(future.cert),
      futureKey: p(future.key),
      otherKey: p("stray.key"),
      otherCa: p(other.cert),
      otherCert: p(otherServer.cert),
      otherCertKey: p(otherServer.key),
      spki: btoa(String.fromCharCode(...hash)),
      async [Symbol.asyncDispose]() {
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  } catch (e) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
}
