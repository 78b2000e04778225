// @generated from the numbered files beside it (`MigrationFiles` in @arbor/store-sql): not edited by hand.
import { Migrations } from "@arbor/store-sql"
import * as m0001 from "./0001_initial.js"
import * as m0002 from "./0002_signing_keys.js"
import * as m0003 from "./0003_secrets.js"
import * as m0004 from "./0004_refresh_tokens.js"
import * as m0005 from "./0005_sign_in.js"
import * as m0006 from "./0006_versions.js"
import * as m0007 from "./0007_granted_by.js"
import * as m0008 from "./0008_changes.js"
import * as m0009 from "./0009_iam_surface.js"
import * as m0010 from "./0010_scim.js"
import * as m0011 from "./0011_subscription_health.js"
import * as m0012 from "./0012_client_state.js"
import * as m0013 from "./0013_rendered.js"
import * as m0014 from "./0014_bindings_before_sign_in.js"
import * as m0015 from "./0015_sending_since.js"
import * as m0016 from "./0016_scim_groups.js"
import * as m0017 from "./0017_decision_vocabularies.js"
import * as m0018 from "./0018_binding_windows.js"
import * as m0019 from "./0019_binding_conditions.js"
import * as m0020 from "./0020_elevations.js"
import * as m0021 from "./0021_changes_before.js"

/** The migrations, by `<id>_<name>`, each frozen once released. */
export const migrations: Migrations.Migrations = {
  "0001_initial": Migrations.statements(m0001.statements),
  "0002_signing_keys": Migrations.statements(m0002.statements),
  "0003_secrets": Migrations.statements(m0003.statements),
  "0004_refresh_tokens": Migrations.statements(m0004.statements),
  "0005_sign_in": Migrations.statements(m0005.statements),
  "0006_versions": Migrations.statements(m0006.statements),
  "0007_granted_by": Migrations.statements(m0007.statements),
  "0008_changes": Migrations.statements(m0008.statements),
  "0009_iam_surface": Migrations.statements(m0009.statements),
  "0010_scim": Migrations.statements(m0010.statements),
  "0011_subscription_health": Migrations.statements(m0011.statements),
  "0012_client_state": Migrations.statements(m0012.statements),
  "0013_rendered": Migrations.statements(m0013.statements),
  "0014_bindings_before_sign_in": Migrations.statements(m0014.statements),
  "0015_sending_since": Migrations.statements(m0015.statements),
  "0016_scim_groups": Migrations.statements(m0016.statements),
  "0017_decision_vocabularies": Migrations.statements(m0017.statements),
  "0018_binding_windows": Migrations.statements(m0018.statements),
  "0019_binding_conditions": Migrations.statements(m0019.statements),
  "0020_elevations": Migrations.statements(m0020.statements),
  "0021_changes_before": Migrations.statements(m0021.statements)
}
