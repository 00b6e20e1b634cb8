import { csvRecord } from '../common/csv-write.ts';
import type { Random } from '../common/random.ts';

/**
 * The demo's prospects: names, companies, titles, zones and countries drawn from a seeded random
 * source, so the same seed fills the same workspace. Each place pairs an IANA zone with its
 * country (and region where holidays differ by region) and names people there are likely to have;
 * a few leads carry no zone, so the engine falls back to their country's or the mailbox's.
 */

export interface DemoLead {
  email: string;
  firstName: string;
  lastName: string;
  company: string;
  title: string;
  country: string;
  region: string;
  timeZone: string;
}

interface Place {
  zone: string;
  country: string;
  region: string;
  first: readonly string[];
  last: readonly string[];
  tld: string;
  /** Share of the leads, relative to the other places. */
  weight: number;
}

const places: readonly Place[] = [
  { zone: 'America/New_York', country: 'US', region: 'NY', tld: 'com', weight: 5, first: ['Emily', 'Michael', 'Jessica', 'David', 'Ashley', 'Chris', 'Sarah', 'Jordan'], last: ['Johnson', 'Williams', 'Brown', 'Miller', 'Davis', 'Garcia', 'Rodriguez', 'Wilson'] },
  { zone: 'America/Chicago', country: 'US', region: 'IL', tld: 'com', weight: 3, first: ['Megan', 'Tyler', 'Lauren', 'Kevin', 'Hannah', 'Ryan'], last: ['Anderson', 'Thomas', 'Moore', 'Jackson', 'Martin', 'Lee'] },
  { zone: 'America/Los_Angeles', country: 'US', region: 'CA', tld: 'com', weight: 4, first: ['Olivia', 'Ethan', 'Sofia', 'Daniel', 'Mia', 'Lucas'], last: ['Nguyen', 'Kim', 'Patel', 'Lopez', 'Chen', 'Hernandez'] },
  { zone: 'America/Toronto', country: 'CA', region: 'ON', tld: 'ca', weight: 2, first: ['Liam', 'Chloe', 'Noah', 'Emma', 'Owen'], last: ['Tremblay', 'Roy', 'Campbell', 'MacDonald', 'Singh'] },
  { zone: 'America/Sao_Paulo', country: 'BR', region: 'SP', tld: 'com.br', weight: 2, first: ['Lucas', 'Beatriz', 'Gabriel', 'Mariana', 'Rafael'], last: ['Silva', 'Santos', 'Oliveira', 'Souza', 'Costa'] },
  { zone: 'America/Mexico_City', country: 'MX', region: '', tld: 'mx', weight: 1, first: ['Diego', 'Valeria', 'Santiago', 'Ximena'], last: ['Hernández', 'García', 'Martínez', 'Ramírez'] },
  { zone: 'Europe/London', country: 'GB', region: 'ENG', tld: 'co.uk', weight: 4, first: ['Oliver', 'Amelia', 'Harry', 'Isla', 'George', 'Poppy'], last: ['Smith', 'Taylor', 'Evans', 'Walker', 'Wright', 'Hughes'] },
  { zone: 'Europe/Dublin', country: 'IE', region: '', tld: 'ie', weight: 1, first: ['Aoife', 'Cian', 'Siobhan', 'Darragh'], last: ['Murphy', 'Kelly', "O'Sullivan", 'Byrne'] },
  { zone: 'Europe/Berlin', country: 'DE', region: 'BY', tld: 'de', weight: 3, first: ['Lukas', 'Anna', 'Felix', 'Lena', 'Jonas', 'Marie'], last: ['Müller', 'Schmidt', 'Schneider', 'Fischer', 'Weber', 'Wagner'] },
  { zone: 'Europe/Paris', country: 'FR', region: '', tld: 'fr', weight: 2, first: ['Camille', 'Louis', 'Léa', 'Hugo', 'Chloé'], last: ['Martin', 'Bernard', 'Dubois', 'Moreau', 'Laurent'] },
  { zone: 'Europe/Madrid', country: 'ES', region: 'MD', tld: 'es', weight: 1, first: ['Lucía', 'Pablo', 'Carmen', 'Javier'], last: ['García', 'Fernández', 'González', 'Sánchez'] },
  { zone: 'Europe/Amsterdam', country: 'NL', region: '', tld: 'nl', weight: 1, first: ['Daan', 'Sanne', 'Bram', 'Fleur'], last: ['de Jong', 'Jansen', 'de Vries', 'Bakker'] },
  { zone: 'Europe/Stockholm', country: 'SE', region: '', tld: 'se', weight: 1, first: ['Erik', 'Elsa', 'Oskar', 'Maja'], last: ['Andersson', 'Johansson', 'Karlsson', 'Nilsson'] },
  { zone: 'Asia/Kolkata', country: 'IN', region: '', tld: 'in', weight: 2, first: ['Aarav', 'Priya', 'Rohan', 'Ananya', 'Vikram'], last: ['Sharma', 'Iyer', 'Reddy', 'Gupta', 'Nair'] },
  { zone: 'Asia/Singapore', country: 'SG', region: '', tld: 'sg', weight: 1, first: ['Wei Ling', 'Jun Jie', 'Hui Min', 'Darren'], last: ['Tan', 'Lim', 'Ng', 'Goh'] },
  { zone: 'Asia/Tokyo', country: 'JP', region: '', tld: 'jp', weight: 1, first: ['Haruto', 'Yui', 'Sota', 'Aoi'], last: ['Sato', 'Suzuki', 'Takahashi', 'Tanaka'] },
  { zone: 'Australia/Sydney', country: 'AU', region: 'NSW', tld: 'com.au', weight: 2, first: ['Jack', 'Charlotte', 'William', 'Matilda', 'Lachlan'], last: ['Smith', 'Jones', 'Williams', 'Kelly', 'Ryan'] },
  { zone: 'Pacific/Auckland', country: 'NZ', region: '', tld: 'co.nz', weight: 1, first: ['Nikau', 'Aria', 'Hunter', 'Ruby'], last: ['Wilson', 'Thompson', 'Walker', 'Clarke'] },
];

const companyHeads = ['North', 'Blue', 'Bright', 'Silver', 'Red', 'Iron', 'Green', 'Clear', 'Summit', 'Harbor', 'Maple', 'Cedar', 'Atlas', 'Nova', 'Lumen', 'Vertex', 'Pine', 'Orbit'];
const companyTails = ['wind', 'stone', 'field', 'path', 'bridge', 'works', 'labs', 'point', 'gate', 'line', 'leaf', 'forge', 'peak', 'wave'];
const companySuffixes = ['', '', ' Logistics', ' Analytics', ' Health', ' Software', ' Robotics', ' Foods', ' Energy', ' Capital', ' Retail'];
const titles = ['Head of Sales', 'VP Sales', 'Sales Operations Manager', 'Revenue Operations Lead', 'Chief Revenue Officer', 'Founder', 'Head of Growth', 'Business Development Manager', 'Marketing Director', 'COO'];

function pick<T>(r: Random, xs: readonly T[]): T {
  return xs[r.int(0, xs.length - 1)]!;
}

function weighted(r: Random): Place {
  const total = places.reduce((s, p) => s + p.weight, 0);
  let x = r.next() * total;
  for (const p of places) if ((x -= p.weight) < 0) return p;
  return places[places.length - 1]!;
}

/** Letters a mailbox's local part keeps: accents folded, spaces and apostrophes dropped. */
function slug(s: string): string {
  return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '');
}

/** `n` distinct prospects; a few share a company (colleagues), none share an address. */
export function generateLeads(r: Random, n: number): DemoLead[] {
  const out: DemoLead[] = [];
  const seen = new Set<string>();
  const companies: Array<{ name: string; domain: string; place: Place }> = [];
  while (out.length < n) {
    const colleague = companies.length > 0 && r.next() < 0.15;
    let company = colleague ? pick(r, companies) : undefined;
    if (!company) {
      const place = weighted(r);
      const stem = `${pick(r, companyHeads)}${pick(r, companyTails)}`;
      const name = `${stem}${pick(r, companySuffixes)}`;
      company = { name, domain: `${slug(name)}.${place.tld}.example`, place };
      companies.push(company);
    }
    const p = company.place;
    const firstName = pick(r, p.first);
    const lastName = pick(r, p.last);
    let local = `${slug(firstName)}.${slug(lastName)}`;
    for (let i = 2; seen.has(`${local}@${company.domain}`); i++) local = `${slug(firstName)}.${slug(lastName)}${i}`;
    const email = `${local}@${company.domain}`;
    seen.add(email);
    // One lead in twelve has no zone in the CRM export: the engine derives one from the country.
    const timeZone = r.next() < 1 / 12 ? '' : p.zone;
    out.push({ email, firstName, lastName, company: company.name, title: pick(r, titles), country: p.country, region: p.region, timeZone });
  }
  return out;
}

/** The leads as the CSV a user would import (RFC 4180 quoting). */
export function leadsCsv(leads: readonly DemoLead[]): string {
  const rows = leads.map((l) => csvRecord([l.email, l.firstName, l.lastName, l.company, l.title, l.country, l.region, l.timeZone], ',', ''));
  return ['email,first_name,last_name,company,title,country,region,time_zone', ...rows].join('\n') + '\n';
}
