/**
 * Migration 13: the indexes in a unique key's order that PostgreSQL had and SQLite lacked (providers, repos, tags and
 * advisories by name under their parent): the first migration written from the descriptors' rendering (`SqliteDdl`).
 */
export const statements = [
  `CREATE INDEX identity_providers__parent__name ON identity_providers (parent, name, uid)`,
  `CREATE INDEX repos__parent__name ON repos (parent, name, uid)`,
  `CREATE INDEX tags__parent__name ON tags (parent, name, uid)`,
  `CREATE INDEX advisories__parent__advisory_id ON advisories (parent, advisory_id, uid)`
]
