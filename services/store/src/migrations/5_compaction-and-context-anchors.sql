-- Long sessions. A compaction replaces a run's history by a new revision that
-- starts a message chain of its own (parent_id NULL: its message_ids hold the
-- whole new history) and records the head it replaced in compacted_from_id.
-- History is still never edited: the replaced chain stays as it was, and a
-- client checkpoint from before the compaction still finds it by digest.
ALTER TABLE revisions ADD COLUMN compacted_from_id uuid REFERENCES revisions (id);
-- Messages of the replaced history the summary stands for.
ALTER TABLE revisions ADD COLUMN summarized_count integer;
ALTER TABLE revisions ADD CONSTRAINT revisions_compaction_starts_a_chain
  CHECK (compacted_from_id IS NULL OR (parent_id IS NULL AND summarized_count IS NOT NULL));

-- Context anchors: a model call built from revision_id's history (message_count
-- messages) for which the provider reported input_tokens. The run worker
-- estimates the next call from the newest anchor of its history plus what was
-- appended since. Append-only like the other content tables: only the
-- retention job deletes anchors, with the revisions they measure (migration 4).
CREATE TABLE context_anchors (
  revision_id uuid PRIMARY KEY REFERENCES revisions (id),
  message_count integer NOT NULL CHECK (message_count > 0),
  input_tokens bigint NOT NULL CHECK (input_tokens >= 0),
  run_id text NOT NULL,
  provider_call_index integer NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TRIGGER context_anchors_append_only BEFORE UPDATE OR DELETE ON context_anchors
  FOR EACH ROW EXECUTE FUNCTION reject_content_rewrite();
CREATE TRIGGER context_anchors_no_truncate BEFORE TRUNCATE ON context_anchors
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();
