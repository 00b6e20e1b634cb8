import pg from 'pg';

/**
 * Cadenza's commits as seen from outside, for the rounds whose fault is not a failover (etcd's own
 * failures): every `everyMs` each node is asked whether it takes writes and when its last
 * transaction committed (`pg_last_committed_xact()`, which needs `track_commit_timestamp = on`, as
 * the drills' clusters set). The drill itself writes nothing, so every commit a writable node
 * reports is Cadenza's. A stall is then the longest gap between two commits seen; commits closer
 * together than `everyMs` show as one, so a gap is exact to within `everyMs`.
 *
 * A node that does not answer (demoted, restarting) is asked again on a fresh connection next time;
 * a standby's answer is left out (its last commit is the primary's, replayed).
 */
export interface CommitWatch {
  /** Commit instants (ms) seen on a writable node, ascending, each once. */
  commits(): number[];
  stop(): Promise<void>;
}

export interface CommitGap {
  /** The longest gap (ms) between commits from the last one before `from` to `to`. */
  gapMs: number;
  /** The commit that ends it (ms), or null when no commit came before `to`. */
  endsAt: number | null;
  /** The last commit at or before `from`. */
  lastBefore: number | null;
}

/** Pure: the longest gap in `commits` (ascending) over [from, to], counting from the last commit before `from`. */
export function longestGap(commits: number[], from: number, to: number): CommitGap {
  const before = commits.filter((c) => c <= from);
  const lastBefore = before.length > 0 ? before[before.length - 1]! : null;
  const within = commits.filter((c) => c > from && c <= to);
  let prev = lastBefore ?? from;
  let gapMs = 0;
  let endsAt: number | null = null;
  for (const c of within) {
    if (c - prev > gapMs) {
      gapMs = c - prev;
      endsAt = c;
    }
    prev = c;
  }
  // No commit since the last one seen: the gap runs on to the end of the window.
  if (to - prev > gapMs) {
    gapMs = to - prev;
    endsAt = null;
  }
  return { gapMs, endsAt, lastBefore };
}

/** Pure: the longest gap between two commits both within [from, to]: Cadenza's pace when nothing fails. */
export function longestGapBetween(commits: number[], from: number, to: number): number {
  const within = commits.filter((c) => c >= from && c <= to);
  let gap = 0;
  for (let i = 1; i < within.length; i++) gap = Math.max(gap, within[i]! - within[i - 1]!);
  return gap;
}

export function watchCommits(urls: string[], everyMs = 150): CommitWatch {
  const seen = new Set<number>();
  const clients = new Map<string, pg.Client>();
  let stopped = false;
  const ask = async (url: string) => {
    let client = clients.get(url);
    try {
      if (!client) {
        client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000, query_timeout: 1_000 });
        client.on('error', () => undefined);
        clients.set(url, client);
        await client.connect();
      }
      const { rows } = await client.query<{ standby: boolean; at: Date | null }>('select pg_is_in_recovery() as standby, (pg_last_committed_xact()).timestamp as at');
      const row = rows[0];
      if (row && !row.standby && row.at) seen.add(row.at.getTime());
    } catch {
      clients.delete(url);
      await client?.end().catch(() => undefined);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const tick = Date.now();
      await Promise.all(urls.map(ask));
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (Date.now() - tick))));
    }
  })();
  return {
    commits: () => [...seen].sort((a, b) => a - b),
    async stop() {
      stopped = true;
      await loop;
      await Promise.all([...clients.values()].map((c) => c.end().catch(() => undefined)));
    },
  };
}
