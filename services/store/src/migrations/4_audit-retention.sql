-- Audit log and content retention (docs/audit-and-retention.md).
--
-- audit_log: append-only record of admin actions (members, keys, teams,
-- budgets, limits) and of run starts, written by triggers in the same
-- transaction as the change itself, so no code path can change one of these
-- tables without its audit row. Never conversation content: names, ids,
-- models, limits and times only.
--
-- Retention: conversation content (messages, revisions, tool rounds and
-- results, blobs) older than its team's retention_days is deleted by the
-- store's retention job. That is the one exception to append-only storage:
-- the content tables' triggers let a DELETE through only inside a transaction
-- that set `byok.retention_purge = 'on'` (SET LOCAL, services/store/src/
-- retention/purge.ts). UPDATE and TRUNCATE stay refused; the ledger and the
-- audit log stay strictly append-only.

-- ---- Audit log ----

CREATE TABLE audit_log (
  id bigserial PRIMARY KEY,
  at timestamptz NOT NULL DEFAULT now(),
  -- member.created, member.revoked, member.team_changed, key.created,
  -- key.revoked, key.rotated, key.expiry_changed, team.created, team.updated,
  -- team.deleted, budget.set, budget.deleted, limits.set, run.started,
  -- retention.purged
  action text NOT NULL CHECK (action ~ '^[a-z]+\.[a-z_]+$'),
  -- 'admin' (the admin page, API and CLI), 'member' (run starts), 'retention' (the job).
  actor text NOT NULL,
  member_id text,
  team_id text,
  key_id text,
  run_id text,
  model_id text,
  details jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX audit_log_at ON audit_log (at, id);
CREATE INDEX audit_log_member_at ON audit_log (member_id, at) WHERE member_id IS NOT NULL;

CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();

-- Who changes admin tables: 'admin' unless the transaction says otherwise (SET LOCAL byok.audit_actor).
CREATE FUNCTION audit_actor() RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(NULLIF(current_setting('byok.audit_actor', true), ''), 'admin')
$$;

CREATE FUNCTION audit_members() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO audit_log (action, actor, member_id, team_id, details)
      VALUES ('member.created', audit_actor(), NEW.id::text, NEW.team_id::text, jsonb_build_object('name', NEW.name));
  ELSE
    IF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
      INSERT INTO audit_log (action, actor, member_id, team_id, details)
        VALUES ('member.revoked', audit_actor(), NEW.id::text, NEW.team_id::text, jsonb_build_object('name', NEW.name));
    END IF;
    IF OLD.team_id IS DISTINCT FROM NEW.team_id THEN
      INSERT INTO audit_log (action, actor, member_id, team_id, details)
        VALUES ('member.team_changed', audit_actor(), NEW.id::text, NEW.team_id::text, jsonb_build_object('from_team_id', OLD.team_id, 'name', NEW.name));
    END IF;
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER members_audit AFTER INSERT OR UPDATE ON members
  FOR EACH ROW EXECUTE FUNCTION audit_members();

CREATE FUNCTION audit_member_keys() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO audit_log (action, actor, member_id, key_id, details)
      VALUES ('key.created', audit_actor(), NEW.member_id::text, NEW.id::text, jsonb_build_object('label', NEW.label, 'expires_at', NEW.expires_at));
  ELSIF OLD.replaced_by IS NULL AND NEW.replaced_by IS NOT NULL THEN
    INSERT INTO audit_log (action, actor, member_id, key_id, details)
      VALUES ('key.rotated', audit_actor(), NEW.member_id::text, NEW.id::text,
        jsonb_build_object('replaced_by_key_id', NEW.replaced_by, 'expires_at', NEW.expires_at, 'revoked_at', NEW.revoked_at));
  ELSIF OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL THEN
    INSERT INTO audit_log (action, actor, member_id, key_id, details)
      VALUES ('key.revoked', audit_actor(), NEW.member_id::text, NEW.id::text, jsonb_build_object('label', NEW.label));
  ELSIF OLD.expires_at IS DISTINCT FROM NEW.expires_at THEN
    INSERT INTO audit_log (action, actor, member_id, key_id, details)
      VALUES ('key.expiry_changed', audit_actor(), NEW.member_id::text, NEW.id::text, jsonb_build_object('from', OLD.expires_at, 'to', NEW.expires_at));
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER member_keys_audit AFTER INSERT OR UPDATE ON member_keys
  FOR EACH ROW EXECUTE FUNCTION audit_member_keys();

CREATE FUNCTION audit_teams() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO audit_log (action, actor, team_id, details) VALUES ('team.deleted', audit_actor(), OLD.id::text, jsonb_build_object('name', OLD.name));
  ELSIF TG_OP = 'INSERT' THEN
    INSERT INTO audit_log (action, actor, team_id, details)
      VALUES ('team.created', audit_actor(), NEW.id::text,
        jsonb_build_object('name', NEW.name, 'allowed_models', NEW.allowed_models, 'retention_days', NEW.retention_days));
  ELSIF (OLD.name, OLD.allowed_models, OLD.retention_days) IS DISTINCT FROM (NEW.name, NEW.allowed_models, NEW.retention_days) THEN
    INSERT INTO audit_log (action, actor, team_id, details)
      VALUES ('team.updated', audit_actor(), NEW.id::text,
        jsonb_build_object('name', NEW.name, 'allowed_models', NEW.allowed_models, 'retention_days', NEW.retention_days,
          'from', jsonb_build_object('name', OLD.name, 'allowed_models', OLD.allowed_models, 'retention_days', OLD.retention_days)));
  END IF;
  RETURN NULL;
END;
$$;
CREATE TRIGGER teams_audit AFTER INSERT OR UPDATE OR DELETE ON teams
  FOR EACH ROW EXECUTE FUNCTION audit_teams();

CREATE FUNCTION audit_budgets() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  b budgets;
BEGIN
  IF TG_OP = 'DELETE' THEN b := OLD; ELSE b := NEW; END IF;
  IF TG_OP = 'UPDATE' AND OLD.limit_usd = NEW.limit_usd THEN RETURN NULL; END IF;
  INSERT INTO audit_log (action, actor, member_id, team_id, model_id, details)
    VALUES (CASE WHEN TG_OP = 'DELETE' THEN 'budget.deleted' ELSE 'budget.set' END, audit_actor(), b.member_id::text, b.team_id::text, b.model_id,
      jsonb_build_object('budget_id', b.id, 'scope', b.scope, 'period', b.period, 'limit_usd', b.limit_usd::text,
        'previous_limit_usd', CASE WHEN TG_OP = 'UPDATE' THEN OLD.limit_usd::text END));
  RETURN NULL;
END;
$$;
CREATE TRIGGER budgets_audit AFTER INSERT OR UPDATE OR DELETE ON budgets
  FOR EACH ROW EXECUTE FUNCTION audit_budgets();

CREATE FUNCTION audit_member_limits() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND (OLD.requests_per_minute, OLD.tokens_per_minute, OLD.concurrent_runs)
      IS NOT DISTINCT FROM (NEW.requests_per_minute, NEW.tokens_per_minute, NEW.concurrent_runs) THEN
    RETURN NULL;
  END IF;
  INSERT INTO audit_log (action, actor, member_id, details)
    VALUES ('limits.set', audit_actor(), NEW.member_id::text,
      jsonb_build_object('requests_per_minute', NEW.requests_per_minute, 'tokens_per_minute', NEW.tokens_per_minute, 'concurrent_runs', NEW.concurrent_runs));
  RETURN NULL;
END;
$$;
CREATE TRIGGER member_limits_audit AFTER INSERT OR UPDATE ON member_limits
  FOR EACH ROW EXECUTE FUNCTION audit_member_limits();

-- A run start: who, which model, when (no content, not even the conversation's text).
CREATE FUNCTION audit_runs() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO audit_log (action, actor, member_id, run_id, model_id, details)
    VALUES ('run.started', 'member', NEW.member_id, NEW.id, NEW.model_id,
      jsonb_build_object('conversation_id', NEW.conversation_id, 'parent_run_id', NULLIF(NEW.parent_run_id, '')));
  RETURN NULL;
END;
$$;
CREATE TRIGGER runs_audit AFTER INSERT ON runs
  FOR EACH ROW EXECUTE FUNCTION audit_runs();

-- ---- Retention ----

-- The content tables refuse UPDATE and DELETE, except a DELETE inside a
-- retention purge transaction.
CREATE FUNCTION reject_content_rewrite() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('byok.retention_purge', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION '% is append-only: % rejected (only the retention job deletes content)', TG_TABLE_NAME, TG_OP
    USING ERRCODE = 'restrict_violation';
END;
$$;

DROP TRIGGER messages_append_only ON messages;
CREATE TRIGGER messages_append_only BEFORE UPDATE OR DELETE ON messages
  FOR EACH ROW EXECUTE FUNCTION reject_content_rewrite();
DROP TRIGGER revisions_append_only ON revisions;
CREATE TRIGGER revisions_append_only BEFORE UPDATE OR DELETE ON revisions
  FOR EACH ROW EXECUTE FUNCTION reject_content_rewrite();
DROP TRIGGER tool_results_append_only ON tool_results;
CREATE TRIGGER tool_results_append_only BEFORE UPDATE OR DELETE ON tool_results
  FOR EACH ROW EXECUTE FUNCTION reject_content_rewrite();
DROP TRIGGER blobs_append_only ON blobs;
CREATE TRIGGER blobs_append_only BEFORE UPDATE OR DELETE ON blobs
  FOR EACH ROW EXECUTE FUNCTION reject_content_rewrite();
CREATE TRIGGER blobs_no_truncate BEFORE TRUNCATE ON blobs
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();

-- Blobs are content-addressed and shared: one blob may belong to several
-- conversations. blob_refs says which conversations stored (or fetched) a
-- blob; a purge deletes a blob only when no conversation refers to it any
-- more. Blobs stored before this migration have no references and are kept.
CREATE TABLE blob_refs (
  conversation_id text NOT NULL,
  blob_id bytea NOT NULL CHECK (length(blob_id) = 32),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, blob_id)
);
CREATE INDEX blob_refs_blob ON blob_refs (blob_id);
CREATE INDEX blob_refs_created ON blob_refs (created_at);

-- Old content is found by message age.
CREATE INDEX messages_created ON messages (created_at);

-- The last time the retention job deleted a conversation's content.
ALTER TABLE conversations ADD COLUMN content_purged_at timestamptz;
