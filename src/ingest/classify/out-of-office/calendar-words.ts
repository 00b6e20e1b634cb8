/**
 * Month and weekday names, and the words for "tomorrow", in the languages out-of-office notes are
 * written in. Lower-case; the matcher folds case. Polish needs its genitive month forms ("3 grudnia"),
 * Portuguese and Polish their short weekday forms, because that is how dates are written there.
 */

const MONTHS: Array<[number, string[]]> = [
  [1, ['january', 'jan', 'januar', 'jänner', 'janvier', 'enero', 'gennaio', 'janeiro', 'januari', 'styczeń', 'stycznia', 'styczen', 'janv']],
  [2, ['february', 'feb', 'februar', 'février', 'fevrier', 'febrero', 'febbraio', 'fevereiro', 'februari', 'luty', 'lutego', 'févr']],
  [3, ['march', 'mar', 'märz', 'maerz', 'mrz', 'mär', 'mars', 'marzo', 'março', 'marco', 'maart', 'marts', 'marzec', 'marca']],
  [4, ['april', 'apr', 'avril', 'abril', 'aprile', 'kwiecień', 'kwietnia', 'kwiecien', 'avr']],
  [5, ['may', 'mai', 'mayo', 'maggio', 'maio', 'mei', 'maj', 'maja']],
  [6, ['june', 'jun', 'juni', 'juin', 'junio', 'giugno', 'junho', 'czerwiec', 'czerwca']],
  [7, ['july', 'jul', 'juli', 'juillet', 'julio', 'luglio', 'julho', 'lipiec', 'lipca', 'juil']],
  [8, ['august', 'aug', 'août', 'aout', 'agosto', 'augustus', 'augusti', 'sierpień', 'sierpnia', 'sierpien']],
  [9, ['september', 'sep', 'sept', 'septembre', 'septiembre', 'setiembre', 'settembre', 'setembro', 'wrzesień', 'września', 'wrzesien', 'wrzesnia']],
  [10, ['october', 'oct', 'oktober', 'okt', 'octobre', 'octubre', 'ottobre', 'outubro', 'październik', 'października', 'pazdziernika']],
  [11, ['november', 'nov', 'novembre', 'noviembre', 'novembro', 'listopad', 'listopada']],
  [12, ['december', 'dec', 'dezember', 'dez', 'décembre', 'decembre', 'diciembre', 'dicembre', 'dezembro', 'desember', 'grudzień', 'grudnia', 'grudzien', 'déc']],
];

/**
 * ISO weekday numbers (1 = Monday). English short forms only where they are no other word: not
 * "mon" (French "mon retour"), "sat" or "sun".
 */
const WEEKDAYS: Array<[number, string[]]> = [
  [1, ['monday', 'montag', 'lundi', 'lunes', 'lunedì', 'lunedi', 'segunda-feira', 'segunda', 'maandag', 'måndag', 'mandag', 'poniedziałek', 'poniedzialek', '月曜日', '星期一', '周一', '週一']],
  [2, ['tuesday', 'tues', 'tue', 'dienstag', 'mardi', 'martes', 'martedì', 'martedi', 'terça-feira', 'terça', 'terca', 'dinsdag', 'tisdag', 'tirsdag', 'wtorek', '火曜日', '星期二', '周二', '週二']],
  [3, ['wednesday', 'wed', 'mittwoch', 'mercredi', 'miércoles', 'miercoles', 'mercoledì', 'mercoledi', 'quarta-feira', 'quarta', 'woensdag', 'onsdag', 'środa', 'środę', 'sroda', 'srode', '水曜日', '星期三', '周三', '週三']],
  [4, ['thursday', 'thurs', 'thur', 'thu', 'donnerstag', 'jeudi', 'jueves', 'giovedì', 'giovedi', 'quinta-feira', 'quinta', 'donderdag', 'torsdag', 'czwartek', '木曜日', '星期四', '周四', '週四']],
  [5, ['friday', 'fri', 'freitag', 'vendredi', 'viernes', 'venerdì', 'venerdi', 'sexta-feira', 'sexta', 'vrijdag', 'fredag', 'piątek', 'piatek', '金曜日', '星期五', '周五', '週五']],
  [6, ['saturday', 'samstag', 'sonnabend', 'samedi', 'sábado', 'sabado', 'sabato', 'zaterdag', 'lördag', 'lørdag', 'lordag', 'sobota', 'sobotę', 'sobote', '土曜日', '星期六', '周六', '週六']],
  [7, ['sunday', 'sonntag', 'dimanche', 'domingo', 'domenica', 'zondag', 'söndag', 'søndag', 'sondag', 'niedziela', 'niedzielę', 'niedziele', '日曜日', '星期日', '星期天', '周日', '週日']],
];

export const TOMORROW = ['tomorrow', 'morgen', 'demain', 'mañana', 'domani', 'amanhã', 'amanha', 'imorgon', 'i morgon', 'i morgen', 'jutro', '明日', '明天'];

function index(table: Array<[number, string[]]>): Map<string, number> {
  const m = new Map<string, number>();
  for (const [n, names] of table) for (const name of names) m.set(name, n);
  return m;
}

export const monthByName = index(MONTHS);
export const weekdayByName = index(WEEKDAYS);

/** A regex alternation of the names, longest first so that 'sept' wins over 'sep'. */
export function alternation(names: Iterable<string>): string {
  return [...names].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
}
