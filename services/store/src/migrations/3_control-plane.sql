-- The control plane: teams, several keys per member, the ledger (one row per
-- model call), budgets and rate limits, and the counters and leases the
-- provider gateways use to enforce them across replicas
-- (docs/control-plane.md). Migration 4 is reserved for audit and retention.

-- ---- Teams ----

CREATE TABLE teams (
  id uuid PRIMARY KEY,
  name text NOT NULL UNIQUE CHECK (name <> ''),
  -- BYOK model ids the members may use; NULL = every model.
  allowed_models text[],
  -- Conversation content older than this is deleted by the retention job; NULL = kept.
  retention_days integer CHECK (retention_days > 0),
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX teams_one_default ON teams (is_default) WHERE is_default;

-- The id is DEFAULT_TEAM_ID in packages/contracts/src/ids.ts.
INSERT INTO teams (id, name, is_default) VALUES ('00000000-0000-4000-8000-000000000001', 'default', true);

ALTER TABLE members
  ADD COLUMN team_id uuid NOT NULL DEFAULT '00000000-0000-4000-8000-000000000001' REFERENCES teams (id);
CREATE INDEX members_team ON members (team_id);

-- ---- Member keys: several per member, SHA-256 hashes only ----

CREATE TABLE member_keys (
  id uuid PRIMARY KEY,
  member_id uuid NOT NULL REFERENCES members (id),
  key_hash bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
  label text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  replaced_by uuid REFERENCES member_keys (id)
);
CREATE INDEX member_keys_member ON member_keys (member_id, created_at);

-- Every existing member's key becomes its first key (revoked with the member).
INSERT INTO member_keys (id, member_id, key_hash, label, created_at, revoked_at)
  SELECT gen_random_uuid(), id, key_hash, 'first key', created_at, revoked_at FROM members;

ALTER TABLE members DROP COLUMN key_hash;

-- ---- Ledger: one row per model call attempt ----

CREATE TABLE ledger (
  id bigserial PRIMARY KEY,
  -- run:<run_id>:<n> or request:<request id>; attempt 2, 3, ... when a call is
  -- re-made under the same reference (a new run owner repeating call n).
  call_ref text NOT NULL,
  attempt integer NOT NULL CHECK (attempt > 0),
  -- The admission this row settles: a repeated settle of it is a no-op.
  ticket_id uuid NOT NULL UNIQUE,
  member_id text NOT NULL,
  team_id uuid NOT NULL,
  client_kind text NOT NULL CHECK (client_kind IN ('cursor', 'openai-api', 'anthropic-api')),
  model_id text NOT NULL,
  provider_id text NOT NULL,
  upstream_model text NOT NULL,
  run_id text,
  call_index integer,
  request_id text,
  outcome text NOT NULL,
  -- Exactly as the provider reported them; NULL = not reported.
  input_tokens bigint CHECK (input_tokens >= 0),
  output_tokens bigint CHECK (output_tokens >= 0),
  cache_read_tokens bigint CHECK (cache_read_tokens >= 0),
  cache_write_tokens bigint CHECK (cache_write_tokens >= 0),
  reasoning_tokens bigint CHECK (reasoning_tokens >= 0),
  -- USD; NULL = unknown (missing price or usage), never 0 for unknown.
  cost_usd numeric(30, 12),
  -- What budgets were charged: the cost, or the reservation when the cost is unknown.
  charged_usd numeric(30, 12),
  started_at timestamptz NOT NULL,
  settled_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (call_ref, attempt),
  CHECK ((run_id IS NULL) <> (request_id IS NULL))
);
CREATE INDEX ledger_member_started ON ledger (member_id, started_at);
CREATE INDEX ledger_team_started ON ledger (team_id, started_at);
CREATE INDEX ledger_started ON ledger (started_at);
CREATE INDEX ledger_run ON ledger (run_id) WHERE run_id IS NOT NULL;

CREATE TRIGGER ledger_append_only BEFORE UPDATE OR DELETE ON ledger
  FOR EACH ROW EXECUTE FUNCTION reject_history_rewrite();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
  FOR EACH STATEMENT EXECUTE FUNCTION reject_history_rewrite();

-- ---- Budgets and limits ----

CREATE TABLE budgets (
  id uuid PRIMARY KEY,
  scope text NOT NULL CHECK (scope IN ('member', 'team')),
  member_id uuid REFERENCES members (id),
  team_id uuid REFERENCES teams (id) ON DELETE CASCADE,
  -- NULL = every model.
  model_id text,
  period text NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly')),
  limit_usd numeric(30, 12) NOT NULL CHECK (limit_usd >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((scope = 'member') = (member_id IS NOT NULL)),
  CHECK ((scope = 'team') = (team_id IS NOT NULL)),
  UNIQUE NULLS NOT DISTINCT (scope, member_id, team_id, model_id, period)
);
CREATE INDEX budgets_member ON budgets (member_id) WHERE member_id IS NOT NULL;
CREATE INDEX budgets_team ON budgets (team_id) WHERE team_id IS NOT NULL;

-- NULL = no limit.
CREATE TABLE member_limits (
  member_id uuid PRIMARY KEY REFERENCES members (id),
  requests_per_minute integer CHECK (requests_per_minute > 0),
  tokens_per_minute bigint CHECK (tokens_per_minute > 0),
  concurrent_runs integer CHECK (concurrent_runs > 0),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- ---- Accounting: counters per window, leases held by provider gateways ----

-- counter: 'budget:<budget id>', 'rpm:<member id>', 'tpm:<member id>'.
-- committed: units settled in the window (picodollars for budgets, requests or
-- tokens for rates).
CREATE TABLE accounting_counters (
  counter text NOT NULL,
  window_start timestamptz NOT NULL,
  window_end timestamptz NOT NULL,
  committed numeric(38, 0) NOT NULL DEFAULT 0,
  PRIMARY KEY (counter, window_start)
);
CREATE INDEX accounting_counters_window_end ON accounting_counters (window_end);

-- A slice of a counter's window allowance held by one replica. Exposure of a
-- window = committed + the unconsumed part of its live leases.
CREATE TABLE accounting_leases (
  id uuid PRIMARY KEY,
  counter text NOT NULL,
  window_start timestamptz NOT NULL,
  holder text NOT NULL,
  amount numeric(38, 0) NOT NULL CHECK (amount >= 0),
  consumed numeric(38, 0) NOT NULL DEFAULT 0,
  granted_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  FOREIGN KEY (counter, window_start) REFERENCES accounting_counters (counter, window_start) ON DELETE CASCADE
);
CREATE INDEX accounting_leases_counter ON accounting_leases (counter, window_start);

-- A run holding one of its member's concurrent-run slots (counted while the run is running).
CREATE TABLE run_slots (
  run_id text PRIMARY KEY REFERENCES runs (id),
  member_id text NOT NULL,
  taken_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX run_slots_member ON run_slots (member_id);
