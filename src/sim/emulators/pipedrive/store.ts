import { createHash } from 'node:crypto';
import type { Clock } from '../../../common/clock.ts';

/**
 * One Pipedrive company in memory: users, persons, deals, stages, activities, person custom fields
 * and people filters. Ids are integers counted per entity, as Pipedrive's are. Times have
 * Pipedrive's precision, whole seconds (v2 answers "2026-01-05T09:30:00Z"), so several changes
 * can share one update_time, which is what a change reader's overlap must survive.
 *
 * Every change goes through `touch`, which stamps update_time and tells the change listener (the
 * webhooks) who made it.
 */
export interface Email {
  value: string;
  primary: boolean;
  label: string;
}

export interface Person {
  id: number;
  name: string;
  first_name: string | null;
  last_name: string | null;
  emails: Email[];
  phones: Email[];
  owner_id: number;
  org_id: number | null;
  label_ids: number[];
  job_title: string | null;
  marketing_status: 'no_consent' | 'unsubscribed' | 'subscribed' | 'archived';
  add_time: number;
  update_time: number;
  custom_fields: Record<string, unknown>;
}

export interface Deal {
  id: number;
  title: string;
  person_id: number | null;
  stage_id: number;
  pipeline_id: number;
  status: 'open' | 'won' | 'lost';
  owner_id: number;
  add_time: number;
  update_time: number;
}

export interface Stage {
  id: number;
  name: string;
  pipeline_id: number;
  order_nr: number;
}

export interface Activity {
  id: number;
  subject: string;
  type: string;
  owner_id: number;
  participants: Array<{ person_id: number; primary: boolean }>;
  due_date: string | null;
  due_time: string | null;
  duration: string | null;
  done: boolean;
  note: string | null;
  busy: boolean;
  add_time: number;
  update_time: number;
}

export interface PersonField {
  id: number;
  key: string;
  name: string;
  field_type: string;
  edit_flag: boolean;
  add_time: number;
}

export interface PeopleFilter {
  id: number;
  name: string;
  /** The emulator's filters are fixed sets of persons, not Pipedrive's condition trees. */
  personIds: number[];
}

export interface User {
  id: number;
  name: string;
  email: string;
}

export type Entity = 'person' | 'deal' | 'activity';
export type ChangeListener = (c: { entity: Entity; action: 'create' | 'change' | 'delete'; userId: number; current: object; previous: object | null }) => void;

/** The activity types every company starts with (key_string of /v1/activityTypes). */
export const defaultActivityTypes: ReadonlySet<string> = new Set(['call', 'meeting', 'task', 'deadline', 'email', 'lunch']);

/** Fields every person has; a custom field's key is a 40-character hash instead. */
export const standardPersonFieldNames = ['name', 'first_name', 'last_name', 'email', 'phone', 'owner_id', 'org_id', 'label_ids', 'job_title', 'marketing_status'];

export class PipedriveStore {
  readonly users: User[] = [];
  readonly persons: Person[] = [];
  readonly deals: Deal[] = [];
  readonly stages: Stage[] = [];
  readonly activities: Activity[] = [];
  readonly personFields: PersonField[] = [];
  readonly filters: PeopleFilter[] = [];
  private nextId: Record<string, number> = {};
  listener: ChangeListener | null = null;

  constructor(private readonly clock: Clock) {}

  id(kind: string): number {
    this.nextId[kind] = (this.nextId[kind] ?? 0) + 1;
    return this.nextId[kind];
  }

  /** Now, at Pipedrive's whole-second precision. */
  now(): number {
    return Math.floor(this.clock.now() / 1000) * 1000;
  }

  addUser(name: string, email: string): User {
    const u = { id: this.id('user'), name, email: email.toLowerCase() };
    this.users.push(u);
    return u;
  }

  addPersonField(name: string, fieldType: string): PersonField {
    const id = this.id('personField');
    // A custom field's key: a 40-character hex hash, as Pipedrive's are.
    const key = createHash('sha1').update(`personField:${id}:${name}`).digest('hex');
    const f = { id, key, name, field_type: fieldType, edit_flag: true, add_time: this.now() };
    this.personFields.push(f);
    return f;
  }

  personFieldByKey(key: string): PersonField | undefined {
    return this.personFields.find((f) => f.key === key);
  }

  /** Stamps update_time on a changed record and tells the listener. */
  touch<T extends { update_time: number }>(entity: Entity, action: 'create' | 'change' | 'delete', userId: number, record: T, previous: T | null): void {
    record.update_time = this.now();
    this.listener?.({ entity, action, userId, current: structuredClone(record), previous: previous ? structuredClone(previous) : null });
  }

  person(id: number): Person | undefined {
    return this.persons.find((p) => p.id === id);
  }
}

/** An instant as Pipedrive v2 writes it: RFC 3339 in UTC, whole seconds. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
