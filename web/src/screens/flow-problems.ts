import { createContext, useContext } from 'react';
import { ApiError } from '../api.ts';

/**
 * The server's problems with a sequence draft, each at the field it is about, so the flow editor
 * can show it next to that field. Two forms come back from a save: the body's validation
 * ("body.steps.0.experiment.alpha", details.issues) and the definition's checks
 * ("experiments.0 (tone).arms.1 (b).steps.follow.send_hours: …", details.problems). Both become one
 * path in the API body's names: "steps.0.experiment.alpha", "experiments.0.arms.1.steps.follow.sendHours".
 */
export type Problem = { path: string; message: string };

// The definition file's field names the editor shows, in the body's names. Only a path's last
// segment is a field; the others are indexes and keys, kept as they are (a step may be keyed send_hours).
const bodyNames: Record<string, string> = {
  reply_window_days: 'replyWindowDays',
  min_sample_per_arm: 'minSamplePerArm',
  auto_winner: 'autoWinner',
  send_hours: 'sendHours',
};

export function normalPath(path: string): string {
  const segs = path
    .replace(/^body\./, '')
    .replace(/ \([^)]*\)/g, '')
    .split('.');
  const last = segs.length - 1;
  // After `steps.` in an arm's choices the last segment is a step's key, not a field.
  if (segs[last - 1] !== 'steps') segs[last] = bodyNames[segs[last]!] ?? segs[last]!;
  return segs.join('.');
}

/** The problems of a refused save (empty for any other error). */
export function problemsOf(e: unknown): Problem[] {
  if (!(e instanceof ApiError) || e.code !== 'INVALID_INPUT') return [];
  const issues = Array.isArray(e.details.issues) ? (e.details.issues as Array<{ path: string; message: string }>) : [];
  const problems = Array.isArray(e.details.problems) ? (e.details.problems as string[]) : [];
  return [
    ...issues.map((i) => ({ path: normalPath(i.path), message: i.message })),
    ...problems.map((p) => {
      const at = p.indexOf(': ');
      return at < 0 ? { path: '', message: p } : { path: normalPath(p.slice(0, at)), message: p.slice(at + 2) };
    }),
  ];
}

export const ProblemsContext = createContext<Problem[]>([]);

/** The messages at exactly one of these paths, joined; undefined when there are none. */
export function useProblem(...paths: string[]): string | undefined {
  const all = useContext(ProblemsContext);
  const found = all.filter((p) => paths.includes(p.path)).map((p) => p.message);
  return found.length ? found.join('; ') : undefined;
}
