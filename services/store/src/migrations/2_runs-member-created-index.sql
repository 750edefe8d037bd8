-- Usage per member over a time range (member.usage), and later budgets and rate
-- limits, read a member's runs by start time.
CREATE INDEX runs_member_created ON runs (member_id, created_at);
