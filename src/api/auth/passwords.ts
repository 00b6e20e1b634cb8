import { hash, verify } from '@node-rs/argon2';

/**
 * argon2id with OWASP's second recommended setting (19 MiB, 2 passes, 1 lane): about 20 ms here,
 * slow enough to make a stolen hash expensive, fast enough for a sign-in.
 */
// algorithm 2 is Argon2id (the package's const enum cannot be imported under verbatimModuleSyntax).
const params = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const MIN_PASSWORD_LENGTH = 10;

export function hashPassword(password: string): Promise<string> {
  return hash(password, params);
}

// A real hash of a password nobody knows, so that a sign-in for an unknown address spends the
// same time verifying as one for a known address: the timing does not tell which addresses exist.
let decoy: Promise<string> | undefined;

/** True when the password matches; with no stored hash, verifies against the decoy and says false. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    decoy ??= hashPassword('decoy password that no account has');
    await verify(await decoy, password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}
