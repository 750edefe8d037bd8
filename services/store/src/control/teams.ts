/**
 * Teams: a name, the models their members may use (null = every model) and a
 * retention setting for the admin's retention job. One team is the default
 * (created by the migration, DEFAULT_TEAM_ID): members join it unless put in
 * another, and it cannot be deleted.
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_TEAM_ID } from "@byok/contracts";
import { DatabaseFailure, query, type Queryable } from "../database.ts";
import { ok, reject, type Outcome } from "../outcome.ts";
import { isUuid } from "./uuid.ts";

export interface TeamRow {
  readonly id: string;
  readonly name: string;
  readonly allowedModels: readonly string[] | null;
  readonly retentionDays: number | null;
  readonly isDefault: boolean;
  readonly createdAt: Date;
  readonly members: number;
}

export interface TeamInput {
  readonly name: string;
  readonly allowedModels: readonly string[] | null;
  readonly retentionDays: number | null;
}

interface TeamDbRow {
  id: string;
  name: string;
  allowed_models: string[] | null;
  retention_days: number | null;
  is_default: boolean;
  created_at: Date;
  members: string;
}

const SELECT_TEAMS = `
SELECT t.id, t.name, t.allowed_models, t.retention_days, t.is_default, t.created_at,
       (SELECT count(*) FROM members m WHERE m.team_id = t.id) AS members
  FROM teams t`;

function fromDb(row: TeamDbRow): TeamRow {
  return {
    id: row.id,
    name: row.name,
    allowedModels: row.allowed_models,
    retentionDays: row.retention_days,
    isDefault: row.is_default,
    createdAt: row.created_at,
    members: Number(row.members),
  };
}

const MODEL_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function checkInput(input: TeamInput): Outcome<TeamInput> {
  const name = input.name.trim();
  if (name === "") return reject("invalid", "team name is required");
  if (input.retentionDays !== null && (!Number.isInteger(input.retentionDays) || input.retentionDays < 1)) return reject("invalid", "retention_days must be at least 1 (unset = keep)");
  let allowed: string[] | null = null;
  if (input.allowedModels !== null) {
    allowed = [...new Set(input.allowedModels.map((m) => m.trim()))].sort();
    const bad = allowed.find((m) => !MODEL_ID.test(m));
    if (bad !== undefined) return reject("invalid", `not a model id: ${JSON.stringify(bad)}`);
  }
  return ok({ name, allowedModels: allowed, retentionDays: input.retentionDays });
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof DatabaseFailure && error.code === "23505";
}

export async function findTeam(db: Queryable, teamId: string): Promise<TeamRow | undefined> {
  if (!isUuid(teamId)) return undefined;
  const result = await query<TeamDbRow>(db, `${SELECT_TEAMS} WHERE t.id = $1`, [teamId]);
  const row = result.rows[0];
  return row ? fromDb(row) : undefined;
}

export async function getTeam(db: Queryable, teamId: string): Promise<Outcome<TeamRow>> {
  const team = await findTeam(db, teamId);
  return team ? ok(team) : reject("not_found", `team ${teamId} not found`);
}

export async function createTeam(db: Queryable, input: TeamInput): Promise<Outcome<TeamRow>> {
  const checked = checkInput(input);
  if (checked.kind !== "ok") return checked;
  const { name, allowedModels, retentionDays } = checked.value;
  const id = randomUUID();
  try {
    await query(db, "INSERT INTO teams (id, name, allowed_models, retention_days) VALUES ($1, $2, $3, $4)", [id, name, allowedModels, retentionDays]);
  } catch (error) {
    if (isUniqueViolation(error)) return reject("invalid", `a team named ${JSON.stringify(name)} exists`);
    throw error;
  }
  return getTeam(db, id);
}

export async function updateTeam(db: Queryable, teamId: string, input: TeamInput): Promise<Outcome<TeamRow>> {
  const checked = checkInput(input);
  if (checked.kind !== "ok") return checked;
  if (!isUuid(teamId)) return reject("not_found", `team ${teamId} not found`);
  const { name, allowedModels, retentionDays } = checked.value;
  try {
    const result = await query(db, "UPDATE teams SET name = $2, allowed_models = $3, retention_days = $4, updated_at = now() WHERE id = $1", [teamId, name, allowedModels, retentionDays]);
    if (result.rowCount === 0) return reject("not_found", `team ${teamId} not found`);
  } catch (error) {
    if (isUniqueViolation(error)) return reject("invalid", `a team named ${JSON.stringify(name)} exists`);
    throw error;
  }
  return getTeam(db, teamId);
}

/** Deletes an empty team that is not the default one (its budgets go with it). */
export async function deleteTeam(db: Queryable, teamId: string): Promise<Outcome<null>> {
  const team = await findTeam(db, teamId);
  if (!team) return reject("not_found", `team ${teamId} not found`);
  if (team.isDefault) return reject("invalid", "the default team cannot be deleted");
  if (team.members > 0) return reject("invalid", `team ${team.name} still has ${team.members} member(s); move them first`);
  // A member joining meanwhile makes the foreign key refuse the delete (a constraint error, INTERNAL): rare and safe.
  await query(db, "DELETE FROM teams WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM members WHERE team_id = $1)", [teamId]);
  return ok(null);
}

/** The default team first, then by name. */
export async function listTeams(db: Queryable): Promise<Outcome<TeamRow[]>> {
  const result = await query<TeamDbRow>(db, `${SELECT_TEAMS} ORDER BY t.is_default DESC, t.name, t.id`);
  return ok(result.rows.map(fromDb));
}

/** The id of the team `teamId` names ("" = the default team), or a rejection. */
export async function resolveTeamId(db: Queryable, teamId: string): Promise<Outcome<string>> {
  if (teamId === "") return ok(DEFAULT_TEAM_ID);
  const team = await findTeam(db, teamId);
  return team ? ok(team.id) : reject("not_found", `team ${teamId} not found`);
}
