import { useState, type FormEvent } from 'react';
import { errorMessage } from '../api.ts';

/**
 * A form's submit: busy while `run` works (the button says so and cannot be pressed twice), its
 * failure said in words. `staysBusy`: a success leaves the screen, so the form stays busy until it
 * goes rather than invite a second press meanwhile.
 */
export function useSubmit(run: () => Promise<void>, opts: { staysBusy?: boolean } = {}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await run();
      if (!opts.staysBusy) setBusy(false);
    } catch (err) {
      setError(errorMessage(err));
      setBusy(false);
    }
  };
  return { busy, error, setError, submit };
}

/**
 * A settings save that answers with the new state: busy while it works, then the state handed to
 * `onValue` and `done` said (role="status"), or the failure in words.
 */
export function useSave<T>(onValue: (v: T) => void) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<string>();
  const run = async (what: () => Promise<T>, done: string) => {
    setBusy(true);
    setError(undefined);
    setSaved(undefined);
    try {
      onValue(await what());
      setSaved(done);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, saved, run };
}
