/**
 * Wraps an async pass so that any number of triggers cost at most one run in flight plus one
 * queued: a trigger while a run is in flight asks for one more run after it (the state may have
 * changed since that run read it); further triggers join that queued run. 10,000 enrollments
 * created one API call at a time therefore cause two passes, not 10,000.
 *
 * The returned function resolves when the run that covers this trigger has finished; a run's
 * failure goes to onError, never to the caller (a trigger is a hint, the periodic pass still runs).
 */
export function coalesce(fn: () => Promise<unknown>, onError: (e: unknown) => void = () => undefined): () => Promise<void> {
  let active: Promise<void> | undefined;
  let queued: Promise<void> | undefined;
  const run = (): Promise<void> => {
    const p = (async () => {
      try {
        await fn();
      } catch (e) {
        onError(e);
      }
    })();
    active = p.finally(() => {
      active = undefined;
    });
    return active;
  };
  return () => {
    if (queued) return queued;
    if (!active) return run();
    queued = active.then(() => {
      queued = undefined;
      return run();
    });
    return queued;
  };
}
