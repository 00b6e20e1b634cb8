import { completeAuthorization, startAuthorization, type Connected, type OAuthFlowDeps, type StartRequest } from '../../../mailbox/oauth/flow.ts';
import { consent } from './browser.ts';

/** Connects a mailbox the way a user does (start, consent at the emulator, callback), for tests that need one. */
export async function connectThroughEmulator(deps: OAuthFlowDeps, req: Omit<StartRequest, 'redirectUri'> & { redirectUri?: string }): Promise<Connected> {
  const started = await startAuthorization(deps, { redirectUri: 'http://127.0.0.1:8080/oauth/callback', ...req });
  const callback = await consent(started.url);
  return completeAuthorization(deps, callback.searchParams);
}
