-- Subsequence threading (src/sequence/sql/thread-chain.ts): a moved enrollment's first email
-- continues the thread of the enrollments it was moved from, found by walking moved_to backwards
-- (who points at me?). Without this index each hop of that walk, done once per send, scans every
-- enrollment; with it, a hop is one probe. Most enrollments were never moved, hence partial.
create index enrollment_moved_to on enrollment (moved_to) where moved_to is not null;
