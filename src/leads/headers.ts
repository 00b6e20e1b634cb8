/**
 * Which CSV column feeds which lead field. Without a mapping, a header is compared to a table of
 * synonyms without case, accents, spaces, underscores or punctuation ('E-mail', 'Email Address',
 * 'first_name', 'Given name', 'Organization', 'TZ'…); a column that matches nothing becomes a custom
 * field named in snake_case. A mapping overrides this per column; columns it does not name are
 * still matched automatically (map one to '-' to leave it out).
 */
import { cadenzaError } from '../common/errors.ts';
import { MAX_CUSTOM_NAME_CHARS } from './limits.ts';

export const LEAD_FIELDS = ['email', 'first_name', 'last_name', 'company', 'title', 'phone', 'country', 'region', 'time_zone'] as const;
export type LeadField = (typeof LEAD_FIELDS)[number];

export type ColumnTarget = { kind: 'field'; field: LeadField } | { kind: 'custom'; name: string } | { kind: 'ignore' };

export interface ResolvedColumn {
  header: string;
  target: ColumnTarget;
  /** How the target was chosen, for the summary the CLI prints. */
  source: 'mapping' | 'synonym' | 'unmatched' | 'duplicate' | 'reject_file';
}

/** Synonyms in key form (see headerKey). Add here; the header tests check every entry. */
const SYNONYMS: Record<LeadField, string[]> = {
  email: ['email', 'emailaddress', 'mail', 'emailid', 'workemail', 'businessemail', 'primaryemail', 'contactemail', 'emailaddr', 'courriel', 'correo', 'correoelectronico'],
  first_name: ['firstname', 'first', 'givenname', 'forename', 'fname', 'prenom', 'vorname', 'nombre'],
  last_name: ['lastname', 'last', 'surname', 'familyname', 'lname', 'nachname', 'apellido', 'apellidos'],
  company: ['company', 'companyname', 'organization', 'organisation', 'org', 'organizationname', 'organisationname', 'account', 'accountname', 'employer', 'business', 'businessname', 'firma', 'unternehmen', 'entreprise', 'societe', 'empresa'],
  title: ['title', 'jobtitle', 'position', 'role', 'jobrole', 'designation', 'jobposition', 'poste'],
  phone: ['phone', 'phonenumber', 'mobile', 'mobilephone', 'mobilenumber', 'cell', 'cellphone', 'cellnumber', 'telephone', 'tel', 'telephonenumber', 'workphone', 'directphone', 'directdial', 'businessphone', 'telefon', 'telefono'],
  country: ['country', 'countrycode', 'countryname', 'nation', 'countryregion', 'land', 'pays', 'pais'],
  region: ['region', 'state', 'province', 'stateprovince', 'stateorprovince', 'stateregion', 'statecode', 'bundesland'],
  time_zone: ['timezone', 'tz', 'zone', 'timezonename', 'ianatimezone', 'tzname', 'ianazone', 'zeitzone'],
};

const BY_KEY = new Map<string, LeadField>();
for (const field of LEAD_FIELDS) for (const k of SYNONYMS[field]) BY_KEY.set(k, field);

/** The comparison form of a header: 'E-Mail Address ' → 'emailaddress', 'Prénom' → 'prenom'. */
export function headerKey(header: string): string {
  return header
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/** The lead field a header names, or null. */
export function matchHeader(header: string): LeadField | null {
  return BY_KEY.get(headerKey(header)) ?? null;
}

/** A custom field's name: 'Deal Size ($)' → 'deal_size', 'LinkedInURL' → 'linked_in_url'; '' when nothing is left. */
export function customFieldName(header: string): string {
  return header
    .replace(/ß/g, 'ss')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, MAX_CUSTOM_NAME_CHARS)
    .replace(/_+$/, '');
}

/** The columns a reject file appends (csv-writer.ts); a re-imported reject file leaves them out. */
export const REJECT_FILE_COLUMNS = ['line', 'reason', 'message', 'raw'] as const;

/** Parses one mapping target: a lead field, 'custom.<name>' or '-'. */
function parseTarget(column: string, value: string): ColumnTarget {
  const v = value.trim();
  if (v === '-' || v === '') return { kind: 'ignore' };
  if ((LEAD_FIELDS as readonly string[]).includes(v)) return { kind: 'field', field: v as LeadField };
  if (v.startsWith('custom.')) {
    const name = customFieldName(v.slice('custom.'.length));
    if (name !== '') return { kind: 'custom', name };
  }
  throw cadenzaError(
    'INVALID_INPUT',
    `mapping for column '${column}': '${value}' is not a lead field (${LEAD_FIELDS.join(', ')}), 'custom.<name>' or '-'`,
    { column, target: value },
  );
}

/**
 * Resolves every column of the header. Throws INVALID_INPUT when the mapping names a column the
 * file lacks or maps two columns to one field, or when no column gives the email.
 */
export function resolveColumns(headers: readonly string[], mapping?: Record<string, string>): ResolvedColumn[] {
  const out: Array<ResolvedColumn | undefined> = headers.map(() => undefined);
  const taken = new Map<LeadField, string>();

  // A reject file written by an earlier import ends with its four bookkeeping columns.
  const n = headers.length;
  const fromRejectFile =
    n > REJECT_FILE_COLUMNS.length && REJECT_FILE_COLUMNS.every((c, i) => headers[n - REJECT_FILE_COLUMNS.length + i] === c);
  if (fromRejectFile) {
    for (let i = n - REJECT_FILE_COLUMNS.length; i < n; i++) out[i] = { header: headers[i]!, target: { kind: 'ignore' }, source: 'reject_file' };
  }

  if (mapping) {
    for (const [column, value] of Object.entries(mapping)) {
      // Exact header first, then the first free column whose key matches ('Email ' for 'email').
      let i = headers.findIndex((h, j) => h === column && !out[j]);
      if (i === -1) i = headers.findIndex((h, j) => headerKey(h) === headerKey(column) && headerKey(column) !== '' && !out[j]);
      if (i === -1) {
        throw cadenzaError('INVALID_INPUT', `the mapping names column '${column}', which the file's header does not have`, {
          column,
          headers: [...headers],
        });
      }
      const target = parseTarget(column, value);
      if (target.kind === 'field') {
        const prev = taken.get(target.field);
        if (prev !== undefined) {
          throw cadenzaError('INVALID_INPUT', `the mapping sends both '${prev}' and '${column}' to ${target.field}`, {
            field: target.field,
          });
        }
        taken.set(target.field, column);
      }
      out[i] = { header: headers[i]!, target, source: 'mapping' };
    }
  }

  const customNames = new Set<string>();
  for (const c of out) if (c?.target.kind === 'custom') customNames.add(c.target.name);
  headers.forEach((header, i) => {
    if (out[i]) return;
    const field = matchHeader(header);
    if (field && !taken.has(field)) {
      taken.set(field, header);
      out[i] = { header, target: { kind: 'field', field }, source: 'synonym' };
      return;
    }
    // Unmatched, or a second column for a field already fed: kept as a custom field, so nothing is lost.
    let name = customFieldName(header) || `column_${i + 1}`;
    if (customNames.has(name) || (LEAD_FIELDS as readonly string[]).includes(name)) {
      let k = 2;
      while (customNames.has(`${name}_${k}`)) k++;
      name = `${name}_${k}`;
    }
    customNames.add(name);
    out[i] = { header, target: { kind: 'custom', name }, source: field ? 'duplicate' : 'unmatched' };
  });

  const columns = out as ResolvedColumn[];
  if (!taken.has('email')) {
    const looksHeaderless = headers.some((h) => /\S@\S+\.\S/.test(h));
    throw cadenzaError(
      'INVALID_INPUT',
      looksHeaderless
        ? 'the first line holds an email address, not column names: the file needs a header line (e.g. "email,first_name,last_name")'
        : `no column holds the email: found ${headers.map((h) => JSON.stringify(h)).join(', ')}; name one 'email' or map it (mapping: { "<column>": "email" })`,
      { headers: [...headers] },
    );
  }
  return columns;
}
