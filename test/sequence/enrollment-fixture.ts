import type { Enrollment } from '../../src/sequence/model.ts';

/** A new, active enrollment of sequence 'seq' in workspace 'ws', for the engine's pure tests. */
export function enrollmentFixture(enrolledAt: number, extra: Partial<Enrollment> = {}): Enrollment {
  return {
    id: '00000000-0000-7000-8000-00000000e001',
    workspaceId: 'ws',
    sequenceId: 'seq',
    leadId: 'lead',
    state: 'active',
    stateReason: null,
    waitingFor: null,
    nextStepId: null,
    lastStepId: null,
    lastStepAt: null,
    doneStepIds: [],
    dueAt: null,
    pausedDueAt: null,
    zone: 'UTC',
    country: null,
    region: null,
    softBounces: 0,
    enrolledAt,
    ...extra,
  };
}
