-- ACP editors' runs are their own client kind in the ledger (issue 9: every
-- model call's row names its client). The list is CLIENT_KINDS in
-- packages/contracts/src/client-kind.ts.
ALTER TABLE ledger DROP CONSTRAINT ledger_client_kind_check;
ALTER TABLE ledger ADD CONSTRAINT ledger_client_kind_check
  CHECK (client_kind IN ('cursor', 'acp', 'openai-api', 'anthropic-api'));
