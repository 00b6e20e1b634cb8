/**
 * The names a template may use, and where each value comes from.
 *
 *   {{first_name}} {{last_name}} {{full_name}} {{email}} {{company}} {{title}} {{phone}}
 *   {{country}} {{region}}                 the lead's own fields (also as {{lead.first_name}} …)
 *   {{custom.industry}}                    a custom field (lead.custom, from import or the API)
 *   {{industry}}                           the same custom field, written plainly (see below)
 *   {{sender.name}} {{sender.first_name}} {{sender.last_name}} {{sender.email}}
 *                                          the sending mailbox (its display name and address)
 *   {{unsubscribe_url}}                    the one-click unsubscribe page of this very email
 *
 * Plain custom names: a name that is not built in is taken as a custom field, as long as that is
 * unambiguous. Built-ins always win (an import never creates a custom field named like a lead
 * field, leads/headers.ts); a plain name one or two letters away from a built-in ("frist_name",
 * "compnay") is refused as unknown, because a typo is far likelier than a custom field of that name
 * — write {{custom.frist_name}} if it really is one. When the workspace's custom field names are
 * known (validateTemplate's customFields), a plain name outside them is unknown too.
 *
 * Names are matched without case ({{First_Name}} is {{first_name}}); a custom key is looked up
 * exactly, then without case.
 */

export const LEAD_FIELDS = ['first_name', 'last_name', 'full_name', 'email', 'company', 'title', 'phone', 'country', 'region'] as const;
export type LeadVariable = (typeof LEAD_FIELDS)[number];
export const SENDER_FIELDS = ['name', 'first_name', 'last_name', 'email'] as const;
export type SenderVariable = (typeof SENDER_FIELDS)[number];

export type VariableRef =
  | { kind: 'lead'; field: LeadVariable }
  | { kind: 'sender'; field: SenderVariable }
  | { kind: 'custom'; key: string }
  | { kind: 'unsubscribe_url' }
  | { kind: 'unknown'; reason: string };

/** What a template reads about the lead (a `lead` row, or what the API holds). */
export interface LeadValues {
  email: string;
  first_name?: string | null;
  last_name?: string | null;
  company?: string | null;
  title?: string | null;
  phone?: string | null;
  country?: string | null;
  region?: string | null;
  /** lead.custom (jsonb). Strings are used as they are; numbers and booleans as text. */
  custom?: Readonly<Record<string, unknown>> | null;
}

/** The sending mailbox. */
export interface SenderValues {
  email: string;
  /** mailbox.display_name */
  name?: string | null;
}

const leadSet = new Set<string>(LEAD_FIELDS);
const senderSet = new Set<string>(SENDER_FIELDS);
/** Every plain name that means something by itself, for typo detection. */
const builtinPlain = [...LEAD_FIELDS, 'unsubscribe_url'];

/**
 * Edit distance (Damerau: adjacent swaps count 1) with an early exit, for "did you mean".
 * Both strings are short identifiers.
 */
export function editDistance(a: string, b: string, max = 3): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The built-in a plain name is probably a typo of, if any. */
export function likelyTypoOf(name: string): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const b of builtinPlain) {
    // Short names get less room: 'city' must not look like a typo of 'title'.
    const allowed = b.length <= 5 ? 1 : 2;
    const dist = editDistance(name, b, allowed);
    if (dist <= allowed && dist < bestD) {
      best = b;
      bestD = dist;
    }
  }
  return best;
}

/**
 * What a variable path names. customFields, when given, are the custom field names this workspace
 * knows (any case); then a plain name must be one of them.
 */
export function classifyVariable(path: readonly string[], customFields?: ReadonlySet<string>): VariableRef {
  const lower = path.map((p) => p.toLowerCase());
  const [head, second] = lower;
  const shown = path.join('.');
  if (lower.length === 1) {
    if (leadSet.has(head!)) return { kind: 'lead', field: head as LeadVariable };
    if (head === 'unsubscribe_url') return { kind: 'unsubscribe_url' };
    if (head === 'custom' || head === 'sender' || head === 'lead') {
      return { kind: 'unknown', reason: `'${shown}' needs a field name (e.g. {{${head}.${head === 'custom' ? 'industry' : 'first_name'}}})` };
    }
    if (customFields?.has(head!)) return { kind: 'custom', key: path[0]! };
    const typo = likelyTypoOf(head!);
    if (typo) return { kind: 'unknown', reason: `unknown variable '${shown}' — did you mean {{${typo}}}? (for a custom field of that name, write {{custom.${path[0]}}})` };
    if (customFields) return { kind: 'unknown', reason: `unknown variable '${shown}': not a built-in variable nor a custom field of this workspace` };
    return { kind: 'custom', key: path[0]! };
  }
  if (lower.length === 2) {
    if (head === 'custom') return { kind: 'custom', key: path[1]! };
    if (head === 'lead' && leadSet.has(second!)) return { kind: 'lead', field: second as LeadVariable };
    if (head === 'sender' && senderSet.has(second!)) return { kind: 'sender', field: second as SenderVariable };
    if (head === 'sender') return { kind: 'unknown', reason: `unknown variable '${shown}' (the sender has: ${SENDER_FIELDS.join(', ')})` };
    if (head === 'lead') return { kind: 'unknown', reason: `unknown variable '${shown}' (a lead has: ${LEAD_FIELDS.join(', ')}; custom fields are {{custom.name}})` };
  }
  if (head === 'custom') return { kind: 'unknown', reason: `unknown variable '${shown}': custom fields are flat ({{custom.name}})` };
  return { kind: 'unknown', reason: `unknown variable '${shown}'` };
}

function clean(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function firstWord(v: string | undefined): string | undefined {
  return v?.split(/\s+/u)[0];
}

function restWords(v: string | undefined): string | undefined {
  const rest = v?.split(/\s+/u).slice(1).join(' ');
  return rest ? rest : undefined;
}

export interface ValueSources {
  lead: LeadValues;
  sender?: SenderValues | null;
  unsubscribeUrl?: string | null;
}

/** The value of a (known) variable, or undefined when this lead has none. */
export function lookupValue(ref: VariableRef, src: ValueSources): string | undefined {
  switch (ref.kind) {
    case 'lead': {
      const l = src.lead;
      if (ref.field === 'full_name') {
        const parts = [clean(l.first_name), clean(l.last_name)].filter((p): p is string => p !== undefined);
        return parts.length ? parts.join(' ') : undefined;
      }
      return clean(l[ref.field]);
    }
    case 'sender': {
      const s = src.sender;
      if (!s) return undefined;
      const name = clean(s.name);
      if (ref.field === 'email') return clean(s.email);
      if (ref.field === 'name') return name;
      return ref.field === 'first_name' ? firstWord(name) : restWords(name);
    }
    case 'custom': {
      const c = src.lead.custom;
      if (!c || typeof c !== 'object') return undefined;
      if (Object.hasOwn(c, ref.key)) return clean(c[ref.key]);
      const want = ref.key.toLowerCase();
      const k = Object.keys(c).find((key) => key.toLowerCase() === want);
      return k === undefined ? undefined : clean(c[k]);
    }
    case 'unsubscribe_url':
      return clean(src.unsubscribeUrl);
    case 'unknown':
      return undefined;
  }
}
