-- HTTP-front requests holding one of their member's concurrent-run slots
-- (the same limit as runs: run_slots of running runs and unexpired
-- request_slots count together). A slot is released when its call ends; one
-- whose replica died lapses at expires_at (the holder renews its slots while
-- their calls run).
CREATE TABLE request_slots (
  request_id text PRIMARY KEY,
  member_id text NOT NULL,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL
);
CREATE INDEX request_slots_member ON request_slots (member_id);
