import { describe, expect, it } from 'vitest';
import { translateViewFilters, type FieldInfo } from './view-filter.ts';

/** Twenty view filters as one REST filter: the operands per field type, and what is refused. */
const fields = new Map<string, FieldInfo>([
  ['f-title', { name: 'jobTitle', type: 'TEXT' }],
  ['f-stage', { name: 'stage', type: 'SELECT' }],
  ['f-size', { name: 'employees', type: 'NUMBER' }],
  ['f-when', { name: 'createdAt', type: 'DATE_TIME' }],
  ['f-phones', { name: 'phones', type: 'PHONES' }],
  ['f-company', { name: 'companyId', type: 'UUID' }],
]);
const one = (fieldMetadataId: string, operand: string, value: unknown, extra: Record<string, unknown> = {}) => translateViewFilters([{ fieldMetadataId, operand, value, ...extra }], fields);

describe('translateViewFilters', () => {
  it('select values (a JSON array as text, or an array), numbers, instants, a phone sub-field', () => {
    expect(one('f-stage', 'IS', '["NEW","MEETING"]')).toEqual({ ok: true, filter: 'stage[in]:["NEW","MEETING"]' });
    expect(one('f-stage', 'IS_NOT', ['CUSTOMER'])).toEqual({ ok: true, filter: 'not(stage[in]:["CUSTOMER"])' });
    expect(one('f-size', 'GREATER_THAN_OR_EQUAL', '50')).toEqual({ ok: true, filter: 'employees[gte]:50' });
    expect(one('f-size', 'LESS_THAN_OR_EQUAL', 10)).toEqual({ ok: true, filter: 'employees[lte]:10' });
    expect(one('f-when', 'IS_AFTER', '2026-03-01T10:00:00+01:00')).toEqual({ ok: true, filter: 'createdAt[gt]:"2026-03-01T09:00:00.000Z"' });
    expect(one('f-phones', 'CONTAINS', '555', { subFieldName: 'primaryPhoneNumber' })).toEqual({ ok: true, filter: 'phones.primaryPhoneNumber[ilike]:"%555%"' });
    expect(translateViewFilters([{ fieldMetadataId: 'f-title', operand: 'CONTAINS', value: 'VP' }, { fieldMetadataId: 'f-size', operand: 'GREATER_THAN_OR_EQUAL', value: 5 }], fields)).toEqual({
      ok: true,
      filter: 'and(jobTitle[ilike]:"%VP%",employees[gte]:5)',
    });
  });

  it('refuses what it cannot say exactly: LIKE wildcards in a value, an unknown field, a relation, a bad number, a select value with a quote', () => {
    expect(one('f-title', 'CONTAINS', '100%')).toMatchObject({ ok: false });
    expect(one('f-nope', 'CONTAINS', 'x')).toMatchObject({ ok: false, reason: expect.stringContaining('f-nope') });
    expect(one('f-company', 'IS', '{"selectedRecordIds":["x"]}')).toMatchObject({ ok: false });
    expect(one('f-size', 'GREATER_THAN_OR_EQUAL', 'many')).toMatchObject({ ok: false });
    expect(one('f-stage', 'IS', '["A\\"B"]')).toMatchObject({ ok: false });
    expect(one('f-when', 'IS_TODAY', '')).toMatchObject({ ok: false, reason: expect.stringContaining('IS_TODAY') });
  });
});
