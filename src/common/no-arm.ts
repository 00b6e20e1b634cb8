/**
 * The arm recorded where none applies: a branch whose conditions all failed (the enrollment
 * continues after it), an enrollment outside a sequence experiment. A word of the engine's
 * (sequence/model.ts) that the figures read too (ops/figures.ts), kept here so that neither
 * imports the other.
 */
export const NO_ARM = '(none)';
