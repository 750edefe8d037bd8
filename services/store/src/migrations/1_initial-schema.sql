-- Initial schema of the BYOK gateway store. Landed migrations are never edited:
-- postgres-migrations checks each applied file's hash at start-up.

CREATE TABLE members (
  id uuid PRIMARY KEY,
  name text NOT NULL CHECK (name <> ''),
  key_hash bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

CREATE TABLE conversations (
  id text PRIMARY KEY,
  member_id text NOT NULL,
  head_revision_id uuid,
  active_run_id text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- body: protobuf JSON of byok.v1.Message; digest: SHA-256 of its canonical binary form.
CREATE TABLE messages (
  id uuid PRIMARY KEY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  body jsonb NOT NULL,
  digest bytea NOT NULL CHECK (length(digest) = 32),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation ON messages (conversation_id);

-- A revision = parent revision + the messages it appends. digest chains over every
-- message of the full history (independent of how it was split into revisions), so
-- identical histories have identical digests. message_count counts the full history.
CREATE TABLE revisions (
  id uuid PRIMARY KEY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  parent_id uuid REFERENCES revisions (id),
  message_ids uuid[] NOT NULL CHECK (cardinality(message_ids) > 0),
  message_count integer NOT NULL CHECK (message_count > 0),
  digest bytea NOT NULL CHECK (length(digest) = 32),
  -- The run that appended it (NULL for imported history) and the run-local
  -- idempotency key of that append.
  run_id text,
  append_key text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX revisions_conversation_digest ON revisions (conversation_id, digest);
CREATE UNIQUE INDEX revisions_run_append_key ON revisions (run_id, append_key)
  WHERE run_id IS NOT NULL AND append_key IS NOT NULL;

CREATE TABLE runs (
  id text PRIMARY KEY,
  conversation_id text NOT NULL REFERENCES conversations (id),
  member_id text NOT NULL,
  parent_run_id text,
  parent_tool_call_id text,
  model_id text NOT NULL DEFAULT '',
  status text NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
  failure_kind text,
  failure_message text,
  usage jsonb,
  provider_call_index integer NOT NULL DEFAULT 0,
  start_revision_id uuid REFERENCES revisions (id),
  head_revision_id uuid REFERENCES revisions (id),
  begin_count integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz
);
CREATE INDEX runs_conversation ON runs (conversation_id);

ALTER TABLE conversations
  ADD CONSTRAINT conversations_head_fk FOREIGN KEY (head_revision_id) REFERENCES revisions (id),
  ADD CONSTRAINT conversations_active_run_fk FOREIGN KEY (active_run_id) REFERENCES runs (id);

-- A tool round is persisted before any tool runs; its results are appended as pairs.
CREATE TABLE tool_rounds (
  run_id text NOT NULL REFERENCES runs (id),
  id text NOT NULL,
  base_revision_id uuid REFERENCES revisions (id),
  assistant jsonb NOT NULL,
  calls jsonb NOT NULL,
  provider_call_index integer NOT NULL DEFAULT 0,
  status text NOT NULL CHECK (status IN ('open', 'settled')),
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL DEFAULT now(),
  settled_at timestamptz,
  PRIMARY KEY (run_id, id)
);
CREATE UNIQUE INDEX tool_rounds_one_open_per_run ON tool_rounds (run_id) WHERE status = 'open';
CREATE UNIQUE INDEX tool_rounds_run_call_index ON tool_rounds (run_id, provider_call_index)
  WHERE provider_call_index > 0;

CREATE TABLE tool_results (
  run_id text NOT NULL,
  round_id text NOT NULL,
  call_id text NOT NULL,
  completion_seq integer NOT NULL CHECK (completion_seq > 0),
  content text NOT NULL,
  is_error boolean NOT NULL,
  revision_id uuid NOT NULL REFERENCES revisions (id),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, round_id, call_id),
  UNIQUE (run_id, round_id, completion_seq),
  FOREIGN KEY (run_id, round_id) REFERENCES tool_rounds (run_id, id)
);

-- Content-addressed blobs: the id is verified by the database itself.
CREATE TABLE blobs (
  id bytea PRIMARY KEY CHECK (length(id) = 32),
  bytes bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT blobs_id_is_sha256 CHECK (id = sha256(bytes))
);

-- Append-only tables: history is never rewritten.
CREATE FUNCTION reject_history_rewrite() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % rejected', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER messages_append_only BEFORE UPDATE OR DELETE ON messages
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER messages_no_truncate BEFORE TRUNCATE ON messages
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER revisions_append_only BEFORE UPDATE OR DELETE ON revisions
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER revisions_no_truncate BEFORE TRUNCATE ON revisions
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER tool_results_append_only BEFORE UPDATE OR DELETE ON tool_results
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER tool_results_no_truncate BEFORE TRUNCATE ON tool_results
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER blobs_append_only BEFORE UPDATE OR DELETE ON blobs
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
