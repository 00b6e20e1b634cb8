/**
 * Countries as ISO 3166-1 alpha-2 codes (what the holiday calendars and the zone fallback key on).
 * Accepted input: a code in any case, or a country's name in English, German, French, Spanish,
 * Italian, Dutch or Portuguese (from the ICU data Node ships, through Intl.DisplayNames), or one of
 * the aliases below (UK, USA, Holland, common alpha-3 codes…), compared without case, accents or
 * punctuation.
 */

/** The 249 officially assigned ISO 3166-1 alpha-2 codes (ISO 3166 Maintenance Agency, 2024). */
export const ISO_ALPHA2 = new Set(
  (
    'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
    'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR ' +
    'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO ' +
    'JP KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR ' +
    'MS MT MU MV MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO ' +
    'RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO TR TT TV ' +
    'TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW'
  ).split(' '),
);

/** Names and codes people write that neither the code list nor the ICU names cover. */
const ALIASES: Record<string, string> = {
  // Reserved or informal codes
  uk: 'GB', el: 'GR',
  // United States and United Kingdom in their many spellings
  usa: 'US', 'united states of america': 'US', america: 'US', 'the united states': 'US', 'the us': 'US',
  'great britain': 'GB', britain: 'GB', england: 'GB', scotland: 'GB', wales: 'GB', 'northern ireland': 'GB',
  // Former or alternative names
  holland: 'NL', 'the netherlands': 'NL', 'czech republic': 'CZ', 'russian federation': 'RU',
  'republic of korea': 'KR', 'korea republic of': 'KR', korea: 'KR', 'north korea': 'KP', 'south korea': 'KR',
  uae: 'AE', emirates: 'AE', ksa: 'SA', prc: 'CN', 'mainland china': 'CN', 'viet nam': 'VN', turkey: 'TR', turkiye: 'TR',
  'ivory coast': 'CI', swaziland: 'SZ', macedonia: 'MK', burma: 'MM', 'cape verde': 'CV', 'east timor': 'TL',
  vatican: 'VA', 'vatican city': 'VA', 'hong kong sar': 'HK', 'macau sar': 'MO', 'taiwan roc': 'TW',
  'bosnia': 'BA', 'the philippines': 'PH', 'republic of ireland': 'IE', 'eire': 'IE', 'slovak republic': 'SK',
  'lao pdr': 'LA', 'dr congo': 'CD', drc: 'CD', 'democratic republic of the congo': 'CD', 'republic of the congo': 'CG',
  // Common ISO 3166-1 alpha-3 codes
  gbr: 'GB', deu: 'DE', fra: 'FR', esp: 'ES', ita: 'IT', nld: 'NL', bel: 'BE', che: 'CH', aut: 'AT',
  swe: 'SE', nor: 'NO', dnk: 'DK', fin: 'FI', irl: 'IE', prt: 'PT', pol: 'PL', cze: 'CZ', can: 'CA', aus: 'AU',
  nzl: 'NZ', ind: 'IN', chn: 'CN', jpn: 'JP', kor: 'KR', bra: 'BR', mex: 'MX', arg: 'AR', zaf: 'ZA', sgp: 'SG',
  isr: 'IL', are: 'AE', sau: 'SA', tur: 'TR', rus: 'RU', ukr: 'UA', hkg: 'HK', twn: 'TW', lux: 'LU', grc: 'GR',
};

const NAME_LOCALES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt'];

/** Lowercase, without accents, punctuation or doubled blanks: 'Côte d’Ivoire' → 'cote divoire'. */
export function foldName(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/&/g, ' and ')
    .replace(/[.'’`´()]/g, '')
    .replace(/[\s,\-_/]+/g, ' ')
    .trim();
}

let byName: Map<string, string> | null = null;

function nameTable(): Map<string, string> {
  if (byName) return byName;
  const table = new Map<string, string>();
  const add = (name: string | undefined, code: string) => {
    if (!name) return;
    const k = foldName(name);
    // The first locale (English) wins a clash between languages.
    if (k !== '' && !table.has(k)) table.set(k, code);
  };
  for (const locale of NAME_LOCALES) {
    for (const style of ['long', 'short'] as const) {
      let names: Intl.DisplayNames;
      try {
        names = new Intl.DisplayNames([locale], { type: 'region', style });
      } catch {
        continue; // a Node built with small-icu knows English only
      }
      for (const code of ISO_ALPHA2) {
        const name = names.of(code);
        if (name && name !== code) add(name, code);
      }
    }
  }
  for (const [alias, code] of Object.entries(ALIASES)) table.set(alias, code);
  byName = table;
  return table;
}

/** The alpha-2 code for a code or name, or null when it is not a country Cadenza knows. */
export function normalizeCountry(raw: string): string | null {
  const s = raw.trim();
  if (s.length === 2 && ISO_ALPHA2.has(s.toUpperCase())) return s.toUpperCase();
  const folded = foldName(s);
  if (folded === '') return null;
  return nameTable().get(folded) ?? nameTable().get(folded.replace(/^the /, '')) ?? nameTable().get(folded.replace(/ /g, '')) ?? null;
}
