/**
 * What the user's browser does with an authorization URL: asks the authorization server, which
 * (the emulator consenting at once) redirects to the client's redirect URI. Returns that URL with
 * its code and state (or error), without following it, so the test decides who receives it.
 */
export async function consent(authorizationUrl: URL | string): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = res.headers.get('location');
  await res.body?.cancel();
  if (res.status !== 302 || !location) throw new Error(`authorization answered ${res.status} without a redirect`);
  return new URL(location);
}
