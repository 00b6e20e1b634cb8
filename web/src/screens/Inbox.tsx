import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { api, call, errorMessage, ws } from '../api.ts';
import type { ScreenProps } from '../Shell.tsx';
import type { ApiBody, InboxFilters as Filters, InboxMessage, Mailbox, Me, Member, SequenceSummary, TeamLabel } from '../types.ts';
import { Badge, Empty, ErrorNote, PageHeader, when } from '../ui/parts.tsx';
import { useScreenShortcuts, useShortcuts } from '../ui/shortcuts.tsx';
import { useLoad, usePoll } from '../ui/use-load.ts';
import { filterQuery, InboxFilters } from './InboxFilters.tsx';
import { InboxPickers, type Picker } from './InboxPickers.tsx';
import { InboxThread, labelTone, TeamLabels, words } from './InboxThread.tsx';

/** The labels a person may give (src/ingest/reclassify.ts PERSON_LABELS; every one the route takes, checked by the generated types). */
type Label = ApiBody<'POST /api/workspaces/:workspaceId/inbox/messages/:messageId/reclassify'>['label'];
const LABELS = ['human_reply', 'auto_reply', 'bounce', 'unsubscribe_request', 'auto_generated'] as const satisfies readonly Label[];
const isLabel = (l: string | null): l is Label => l !== null && (LABELS as readonly string[]).includes(l);

/** The inbox without a mouse; listed by `?` (with the keys that work anywhere, Shell.tsx) and in docs/web.md. */
const SHORTCUTS = { title: 'Inbox', shortcuts: [
  { key: 'j', what: 'Next message' },
  { key: 'k', what: 'Previous message' },
  { key: 'Enter', what: 'Open the conversation (o too; Escape goes back to the list)' },
  { key: 'e', what: 'Done: archive it (in Done: back to the inbox)' },
  { key: 'r', what: 'Reply' },
  { key: 'Ctrl+Enter', what: 'In the reply box: send the reply (Escape closes the box)' },
  { key: 'l', what: 'Label: type to find or create, Enter puts it on or takes it off' },
  { key: 'u', what: 'Mark unread' },
  { key: 's', what: 'Snooze until a time' },
  { key: 'a', what: 'Assign to a teammate' },
  { key: 'c', what: 'Confirm the label of a message waiting for review' },
  { key: '/', what: 'Search' },
] } as const;

type Tab = 'inbox' | 'review' | 'snoozed' | 'done';
const TABS: Array<[Tab, string]> = [['inbox', 'Inbox'], ['review', 'Needs review'], ['snoozed', 'Snoozed'], ['done', 'Done']];
const tabFilters = (t: Tab): Filters => (t === 'review' ? { status: 'inbox', needsReview: 'true' } : { status: t });

/** Both panes side by side from this width; below it the list, then the conversation on its own. */
const WIDE = '(min-width: 960px)';

function useWide(): boolean {
  const [wide, setWide] = useState(() => matchMedia(WIDE).matches);
  useEffect(() => {
    const q = matchMedia(WIDE);
    const on = () => setWide(q.matches);
    q.addEventListener('change', on);
    return () => q.removeEventListener('change', on);
  }, []);
  return wide;
}

/**
 * The unified inbox: a dense list of the replies across the mailboxes the reader may read (search,
 * filters, saved views), and the conversation beside it (InboxThread). Triage from the keyboard:
 * a rep works through a hundred replies without the mouse (j/k, e, l, u, s, a, r; `?` lists them).
 */
export function Inbox({ workspaceId }: ScreenProps) {
  const [tab, setTab] = useState<Tab>('inbox');
  const [extra, setExtra] = useState<Filters>({});
  const filters = useMemo(() => ({ ...extra, ...tabFilters(tab) }), [extra, tab]);
  const query = filterQuery(filters);
  const list = useLoad(() => api<{ items: InboxMessage[]; nextCursor: string | null }>('GET', ws(workspaceId, `inbox?limit=200&${query}`)), [workspaceId, query]);
  // Older pages, asked for with "Load older"; the 5 s refresh renews the first page only.
  const [older, setOlder] = useState<{ items: InboxMessage[]; next: string | null }>({ items: [], next: null });
  useEffect(() => setOlder({ items: [], next: null }), [query]);
  const nextCursor = older.items.length ? older.next : (list.data?.nextCursor ?? null);
  const review = useLoad(() => api<{ items: InboxMessage[]; nextCursor: string | null }>('GET', ws(workspaceId, 'inbox?limit=100&needsReview=true')), [workspaceId]);
  const refresh = useCallback(() => (list.reload(), review.reload()), [list.reload, review.reload]);
  usePoll(refresh, 5_000);
  const lookups = {
    members: useLoad(() => api<{ members: Member[] }>('GET', ws(workspaceId, 'members')), [workspaceId]).data?.members ?? [],
    mailboxes: useLoad(() => api<{ mailboxes: Mailbox[] }>('GET', ws(workspaceId, 'mailboxes')), [workspaceId]).data?.mailboxes ?? [],
    sequences: useLoad(() => api<{ sequences: SequenceSummary[] }>('GET', ws(workspaceId, 'sequences')), [workspaceId]).data?.sequences ?? [],
  };
  const labels = useLoad(() => api<{ labels: TeamLabel[] }>('GET', ws(workspaceId, 'inbox/labels')), [workspaceId]);
  const meLoad = useLoad(() => api<Me>('GET', '/api/auth/me'), []);
  const meEmail = meLoad.data?.account.email.toLowerCase();
  const me = lookups.members.find((x) => x.email.toLowerCase() === meEmail) ?? null;
  const isAdmin = me !== null && me.role !== 'member';

  // What this page changed before the list caught up: messages that left the view (done,
  // snoozed), and fields changed in place (unread, assignee, labels).
  const [left, setLeft] = useState<ReadonlySet<string>>(new Set());
  const [patched, setPatched] = useState<Record<string, Partial<InboxMessage>>>({});
  useEffect(() => (setLeft(new Set()), setPatched({})), [query]);
  const firstPage = list.data?.items ?? [];
  const onFirst = new Set(firstPage.map((m) => m.id));
  const messages = [...firstPage, ...older.items.filter((m) => !onFirst.has(m.id))].filter((m) => !left.has(m.id)).map((m) => ({ ...m, ...patched[m.id] }));
  const loadOlder = async () => {
    if (!nextCursor) return;
    await run(async () => {
      const r = await api<{ items: InboxMessage[]; nextCursor: string | null }>('GET', ws(workspaceId, `inbox?limit=200&${query}&cursor=${encodeURIComponent(nextCursor)}`));
      setOlder((o) => ({ items: [...o.items, ...r.items], next: r.nextCursor }));
    });
  };
  const [selected, setSelected] = useState<string>();
  const current = messages.find((m) => m.id === selected);
  const [opened, setOpened] = useState(false);
  const wide = useWide();
  const [version, setVersion] = useState(0);
  const [error, setError] = useState<string>();
  const [picker, setPicker] = useState<Picker>(null);
  const showHelp = useScreenShortcuts(SHORTCUTS);
  const listRef = useRef<HTMLUListElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const rowEl = (id: string) => listRef.current?.querySelector<HTMLElement>(`[data-message-id="${CSS.escape(id)}"]`) ?? null;
  const focusRow = (id: string | undefined) => id && requestAnimationFrame(() => rowEl(id)?.focus());

  const run = async (f: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await f();
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  // One message's changes go to the server in the order they were made: "read" (on showing it) and
  // a quick u after it must not arrive the other way round.
  const inOrder = useRef(new Map<string, Promise<unknown>>());
  const patch = (m: InboxMessage, body: ApiBody<'PATCH /api/workspaces/:workspaceId/inbox/messages/:messageId'>) => {
    const p = (inOrder.current.get(m.id) ?? Promise.resolve()).then(() => run(() => call('PATCH /api/workspaces/:workspaceId/inbox/messages/:messageId', ws(workspaceId, `inbox/messages/${m.id}`), body)));
    inOrder.current.set(m.id, p);
    return p;
  };
  const change = (id: string, p: Partial<InboxMessage>) => setPatched((x) => ({ ...x, [id]: { ...x[id], ...p } }));
  /** The message leaves this view (done, snoozed, back from done): the selection moves to the next one. */
  const leave = (m: InboxMessage) => {
    const at = messages.findIndex((x) => x.id === m.id);
    const next = messages[at + 1] ?? messages[at - 1];
    setLeft((s) => new Set([...s, m.id]));
    setSelected(next?.id);
    if (!next) setOpened(false);
    if (!opened || wide) focusRow(next?.id);
  };

  // Shown is read: the conversation on screen (beside the list, or opened on a phone) marks it read, once per showing.
  const shownRead = useRef<string>(undefined);
  useEffect(() => {
    if (!current || !(wide || opened) || shownRead.current === current.id) return;
    shownRead.current = current.id;
    if (current.unread) {
      change(current.id, { unread: false });
      void patch(current, { read: true });
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [current?.id, wide, opened]);

  const done = (m: InboxMessage) => {
    leave(m);
    void patch(m, { done: !m.doneAt }).then(() => list.reload());
  };
  const unread = (m: InboxMessage) => {
    shownRead.current = m.id;
    change(m.id, { unread: true });
    void patch(m, { read: false });
  };
  const relabel = async (m: InboxMessage, label: string) => {
    if (!isLabel(label)) return;
    if (await run(() => call('POST /api/workspaces/:workspaceId/inbox/messages/:messageId/reclassify', ws(workspaceId, `inbox/messages/${m.id}/reclassify`), { label }))) {
      list.reload();
      review.reload();
    }
  };
  const closePicker = () => {
    const m = picker?.message;
    setPicker(null);
    if (m) requestAnimationFrame(() => (opened && !wide ? headingRef.current : rowEl(m.id))?.focus());
  };
  const toggleLabel = async (m: InboxMessage, l: TeamLabel, on: boolean) => {
    const path = ws(workspaceId, `inbox/messages/${m.id}/labels/${l.id}`);
    const ok = await run(() => (on ? call('PUT /api/workspaces/:workspaceId/inbox/messages/:messageId/labels/:labelId', path) : call('DELETE /api/workspaces/:workspaceId/inbox/messages/:messageId/labels/:labelId', path)));
    if (ok) change(m.id, { teamLabels: on ? [...m.teamLabels, l] : m.teamLabels.filter((x) => x.id !== l.id) });
    closePicker();
  };
  const createLabel = async (m: InboxMessage, name: string) => {
    let made: TeamLabel | undefined;
    if (await run(async () => (made = await call('POST /api/workspaces/:workspaceId/inbox/labels', ws(workspaceId, 'inbox/labels'), { name, color: 'blue' })))) {
      labels.reload();
      if (made) await toggleLabel(m, made, true);
    } else closePicker();
  };
  const actions = (m: InboxMessage) => ({
    done: () => done(m),
    unread: () => unread(m),
    snooze: () => setPicker({ kind: 'snooze', message: m }),
    assign: () => setPicker({ kind: 'assign', message: m }),
    label: () => setPicker({ kind: 'label', message: m }),
    relabel: (l: string) => void relabel(m, l),
    relabelOptions: LABELS,
  });
  const open = (id: string) => {
    setSelected(id);
    setOpened(true);
    requestAnimationFrame(() => headingRef.current?.focus());
  };
  const back = useCallback(() => {
    setOpened(false);
    focusRow(selected);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [selected]);

  useShortcuts((key, e) => {
    const at = messages.findIndex((m) => m.id === selected);
    if (key === 'j' || key === 'k') {
      const next = messages[at < 0 ? 0 : Math.max(0, Math.min(messages.length - 1, at + (key === 'j' ? 1 : -1)))];
      if (!next) return false;
      setSelected(next.id);
      if (opened && !wide) setOpened(false);
      rowEl(next.id)?.focus();
      return true;
    }
    if (key === '/') {
      searchRef.current?.focus();
      return true;
    }
    const m = messages[at];
    if (!m) return false;
    switch (key) {
      case 'Enter':
      case 'o':
        // Enter on a button, link or summary keeps its own meaning.
        if (key === 'Enter' && e.target instanceof HTMLElement && e.target.closest('button, a, summary, [role="toolbar"]')) return false;
        open(m.id);
        return true;
      case 'Escape':
        if (!opened) return false;
        back();
        return true;
      case 'e':
        done(m);
        return true;
      case 'u':
        unread(m);
        return true;
      case 's':
      case 'a':
      case 'l':
        setPicker({ kind: key === 's' ? 'snooze' : key === 'a' ? 'assign' : 'label', message: m });
        return true;
      case 'r':
        if (!wide) setOpened(true);
        requestAnimationFrame(() => {
          document.querySelector<HTMLButtonElement>('.conversation [data-action="reply"]')?.click();
        });
        return true;
      case 'c':
        if (!m.needsReview || !isLabel(m.label)) return false;
        void relabel(m, m.label);
        return true;
    }
    return false;
  });

  const reviewCount = review.data ? `${review.data.items.length}${review.data.nextCursor ? '+' : ''}` : '';
  const member = (id: string | null) => lookups.members.find((x) => x.id === id);
  return (
    <>
      <PageHeader title="Inbox">
        <button type="button" className="btn btn-quiet" onClick={showHelp} aria-keyshortcuts="?">
          Keyboard shortcuts
        </button>
        {/* The list as it is filtered now (the tab, search and filters), every page of it. */}
        <a className="btn btn-quiet" href={ws(workspaceId, `inbox.csv?${query}`)} download="inbox.csv" data-testid="inbox-csv">
          Export CSV
        </a>
        <div className="tabs" role="tablist" aria-label="Queue">
          {TABS.map(([t, label]) => (
            <button key={t} type="button" role="tab" aria-selected={tab === t} className="tab" onClick={() => (setTab(t), setSelected(undefined), setOpened(false))}>
              {label}
              {t === 'review' && reviewCount ? ` (${reviewCount})` : ''}
            </button>
          ))}
        </div>
      </PageHeader>
      <ErrorNote error={list.error ?? error} />
      <div className={`unibox${opened ? ' unibox-opened' : ''}`}>
        <section className="unibox-list" aria-label="Message list">
          <InboxFilters workspaceId={workspaceId} filters={extra} onChange={setExtra} lookups={{ ...lookups, labels: labels.data?.labels ?? [] }} searchRef={searchRef} />
          {!list.loading && messages.length === 0 && (
            <Empty>{query.includes('q=') || Object.keys(extra).length ? 'Nothing matches these filters.' : tab === 'inbox' ? 'No replies yet. They appear here within seconds of arriving in any mailbox.' : `Nothing in ${words(tab)}.`}</Empty>
          )}
          <ul className="unibox-rows" aria-label="Messages" ref={listRef}>
            {messages.map((m) => {
              const who = member(m.assigneeId);
              return (
                <li
                  key={m.id}
                  className={`unibox-row${m.unread ? ' is-unread' : ''}`}
                  data-message-id={m.id}
                  tabIndex={-1}
                  aria-current={selected === m.id ? 'true' : undefined}
                  aria-label={`${m.unread ? 'Unread. ' : ''}${m.leadName ?? m.from ?? 'Unknown sender'}${m.company ? `, ${m.company}` : ''}: ${m.subject ?? '(no subject)'}`}
                  onFocus={() => setSelected(m.id)}
                  onClick={() => open(m.id)}
                >
                  <span className="unread-dot" aria-hidden="true" />
                  <div className="unibox-row-main">
                    <div className="unibox-line">
                      <span className="strong unibox-sender">{m.leadName ?? m.from}</span>
                      {m.company && <span className="muted unibox-company">{m.company}</span>}
                      <span className="muted small inbox-when">{when(m.at)}</span>
                    </div>
                    <div className="unibox-line">
                      <span className="unibox-subject">{m.subject ?? '(no subject)'}</span>
                      <span className="muted unibox-snippet">{m.excerpt}</span>
                    </div>
                    <div className="unibox-line small">
                      <Badge tone={labelTone(m.label)}>{words(m.label ?? 'unlabelled')}</Badge>
                      {m.intent && <Badge tone="info">{words(m.intent)}</Badge>}
                      {m.needsReview && <Badge tone="warn">needs review</Badge>}
                      <TeamLabels labels={m.teamLabels} />
                      {m.sequenceName && <span className="muted">{m.sequenceName}</span>}
                      <span className="muted unibox-mailbox">{m.mailboxEmail}</span>
                      {who && <span className="muted">→ {who.name ?? who.email}</span>}
                    </div>
                  </div>
                </li>
              );
            })}
          </ul>
          {nextCursor && (
            <div className="row unibox-more">
              <button type="button" className="btn btn-quiet" onClick={() => void loadOlder()}>
                Load older messages
              </button>
            </div>
          )}
        </section>
        <section className="unibox-conversation" aria-label="Conversation">
          {current ? (
            <InboxThread
              ref={headingRef}
              workspaceId={workspaceId}
              message={current}
              version={version}
              members={lookups.members}
              me={me?.id ?? null}
              isAdmin={isAdmin}
              actions={actions(current)}
              onChanged={() => (list.reload(), setVersion((v) => v + 1))}
              onBack={back}
            />
          ) : (
            <p className="muted unibox-none">Choose a message: j and k move, Enter opens.</p>
          )}
        </section>
      </div>
      <InboxPickers
        picker={picker}
        onClose={closePicker}
        members={lookups.members}
        labels={labels.data?.labels ?? []}
        onSnooze={(until) => {
          const m = picker!.message;
          setPicker(null);
          leave(m);
          void patch(m, { snoozedUntil: until.toISOString() }).then(() => list.reload());
        }}
        onAssign={(userId) => {
          const m = picker!.message;
          closePicker();
          void patch(m, { assigneeId: userId }).then((ok) => ok && change(m.id, { assigneeId: userId }));
        }}
        onToggleLabel={(l, on) => void toggleLabel(picker!.message, l, on)}
        onCreateLabel={(name) => void createLabel(picker!.message, name)}
      />
    </>
  );
}
