/**
 * The TLS files of --tls-cert, --tls-key and --tls-ca: read and checked at start, so that a certificate that does
 * not match its key, or is outside its validity dates, stops the program with one line instead of failing each
 * client's handshake later.
 */
import { errorText } from "../errors.ts";
import { createPrivateKey, X509Certificate } from "node:crypto";
import { type Config, ConfigError, type TlsMaterial } from "./config.ts";
import type { WireTls } from "../wire/channel.ts";

/**
 * Reads and checks the TLS files `cfg` names; null when it names none. Throws ConfigError (naming the flag and the
 * file) for a lone --tls-cert or --tls-key, --tls-ca without them, an unreadable or unparsable file, a key that is
 * not the certificate's, or a certificate that has expired or is not yet valid.
 */
export function readTls(
  cfg: Pick<Config, "tlsCert" | "tlsKey" | "tlsCa">,
  readFile: (path: string) => string = Deno.readTextFileSync,
  now: Date = new Date(),
): TlsMaterial | null {
  if (cfg.tlsCert === null && cfg.tlsKey === null) {
    if (cfg.tlsCa !== null) {
      throw new ConfigError(
        "--tls-ca: process ports over TLS need this process's own certificate too; set --tls-cert and --tls-key",
      );
    }
    return null;
  }
  if (cfg.tlsCert === null || cfg.tlsKey === null) {
    const [given, missing] = cfg.tlsCert === null ? ["--tls-key", "--tls-cert"] : ["--tls-cert", "--tls-key"];
    throw new ConfigError(`${given}: given without ${missing}; TLS needs both the certificate and its key`);
  }
  const read = (flag: string, path: string): string => {
    try {
      return readFile(path);
    } catch (e) {
      throw new ConfigError(`${flag}: cannot read ${path}: ${errorText(e)}`, { cause: e });
    }
  };
  const cert = read("--tls-cert", cfg.tlsCert);
  const key = read("--tls-key", cfg.tlsKey);
  const x509 = parseCert("--tls-cert", cfg.tlsCert, cert);
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (e) {
    throw new ConfigError(`--tls-key: ${cfg.tlsKey} holds no PEM private key: ${errorText(e)}`, { cause: e });
  }
  if (!x509.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      `--tls-key: ${cfg.tlsKey} is not the key of the certificate in ${cfg.tlsCert} (${x509.subject.trim()})`,
    );
  }
  checkDates("--tls-cert", cfg.tlsCert, x509, now);
  let ca: string | null = null;
  if (cfg.tlsCa !== null) {
    ca = read("--tls-ca", cfg.tlsCa);
    checkDates("--tls-ca", cfg.tlsCa, parseCert("--tls-ca", cfg.tlsCa, ca), now);
  }
  return { cert, key, ca };
}

function parseCert(flag: string, path: string, pem: string): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (e) {
    throw new ConfigError(`${flag}: ${path} holds no PEM certificate: ${errorText(e)}`, { cause: e });
  }
}

function checkDates(flag: string, path: string, x509: X509Certificate, now: Date): void {
  const from = new Date(x509.validFrom), to = new Date(x509.validTo);
  if (to.getTime() < now.getTime()) {
    throw new ConfigError(`${flag}: the certificate in ${path} expired on ${to.toISOString()}; renew it`);
  }
  if (from.getTime() > now.getTime()) {
    throw new ConfigError(
      `${flag}: the certificate in ${path} is not valid before ${from.toISOString()}; check this machine's clock`,
    );
  }
}

/** What the process ports need of `tls`: the certificate, key and CA when --tls-ca is set; null otherwise. */
export function wireTls(tls: TlsMaterial | null): WireTls | null {
  return tls?.ca ? { cert: tls.cert, key: tls.key, ca: tls.ca } : null;
}
