/**
 * Saved views, the lists a sequence enrolls from. Twenty keeps views in its metadata (core)
 * schema, not as records: the REST metadata API serves them
 * (metadata-modules/view/controllers/view.controller.ts, `@Controller('rest/metadata/views')`;
 * view-filter.controller.ts, `rest/metadata/viewFilters`), each answering a bare JSON array of
 * DTOs. A view's records are not served by any endpoint: a client reads the view's filters and
 * runs them as a records `filter` itself. The DTO fields below are the ones the view and
 * view-filter DTOs declare that a client reads; the others Twenty sends (icon, kanban settings,
 * workspaceId, …) are left out.
 *
 * Operands are Twenty's ViewFilterOperand (twenty-shared: IS, IS_NOT, CONTAINS,
 * DOES_NOT_CONTAIN, IS_EMPTY, IS_NOT_EMPTY, GREATER_THAN_OR_EQUAL, LESS_THAN_OR_EQUAL, IS_BEFORE,
 * IS_AFTER, IS_RELATIVE, IS_IN_PAST, IS_IN_FUTURE, IS_TODAY, IS_NOT_NULL, VECTOR_SEARCH). The
 * format of `value` per field type (a plain string for text, a JSON array of options for a
 * select) is read from Twenty's front end and is unverified for the REST answer.
 */
export const viewFilterOperands = [
  'IS',
  'IS_NOT',
  'CONTAINS',
  'DOES_NOT_CONTAIN',
  'IS_EMPTY',
  'IS_NOT_EMPTY',
  'GREATER_THAN_OR_EQUAL',
  'LESS_THAN_OR_EQUAL',
  'IS_BEFORE',
  'IS_AFTER',
  'IS_RELATIVE',
  'IS_IN_PAST',
  'IS_IN_FUTURE',
  'IS_TODAY',
  'IS_NOT_NULL',
  'VECTOR_SEARCH',
] as const;
export type ViewFilterOperand = (typeof viewFilterOperands)[number];

export interface ViewDto {
  id: string;
  name: string;
  objectMetadataId: string;
  type: 'TABLE' | 'KANBAN' | 'CALENDAR';
  key: 'INDEX' | null;
  position: number;
}

export interface ViewFilterDto {
  id: string;
  viewId: string;
  fieldMetadataId: string;
  operand: ViewFilterOperand;
  value: unknown;
  subFieldName: string | null;
  viewFilterGroupId: string | null;
}

export class ViewStore {
  private readonly views: ViewDto[] = [];
  private readonly filters: ViewFilterDto[] = [];

  constructor(private readonly newId: () => string) {}

  add(v: Omit<ViewDto, 'id' | 'position' | 'type' | 'key'> & { key?: 'INDEX' | null }, filters: Array<Omit<ViewFilterDto, 'id' | 'viewId' | 'subFieldName' | 'viewFilterGroupId'> & Partial<Pick<ViewFilterDto, 'subFieldName' | 'viewFilterGroupId'>>>): ViewDto {
    const view: ViewDto = { id: this.newId(), name: v.name, objectMetadataId: v.objectMetadataId, type: 'TABLE', key: v.key ?? null, position: this.views.length };
    this.views.push(view);
    for (const f of filters) this.filters.push({ subFieldName: null, viewFilterGroupId: null, ...f, id: this.newId(), viewId: view.id });
    return view;
  }

  list(objectMetadataId?: string): ViewDto[] {
    return this.views.filter((v) => objectMetadataId === undefined || v.objectMetadataId === objectMetadataId);
  }

  filtersOf(viewId?: string): ViewFilterDto[] {
    return this.filters.filter((f) => viewId === undefined || f.viewId === viewId);
  }
}
