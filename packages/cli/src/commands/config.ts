/** `arbor config`: the config file's settings. */
import { Args, Command } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Help from "../Help.js"
import * as Where from "../Where.js"
import { print } from "./shared.js"

const configView = Command.make(
  "view",
  {},
  () => print(Object.entries(Where.readConfig()).map(([k, v]) => `${k}: ${v}`).join("\n"))
).pipe(
  Command.withDescription(`Print the config file's settings. Example: arbor config view`)
)

const configSet = Command.make(
  "set",
  {
    name: Args.choice(Where.settingNames.map((n) => [n, n] as const), { name: "name" }).pipe(
      Args.withDescription(`the setting: ${Where.settingNames.join(" or ")}`)
    ),
    value: Args.text({ name: "value" }).pipe(Args.withDescription("its new value (an address)"))
  },
  ({ name, value }) => Effect.sync(() => Where.writeSetting(name, value))
).pipe(
  Command.withDescription("Set a setting of the config file. Example: arbor config set api https://iam.example.com")
)

/** `arbor config`. */
export const config = Command.make("config").pipe(
  Command.withDescription("The config file ($XDG_CONFIG_HOME/arbor/config.yaml)."),
  Help.withSubcommands([configView, configSet])
)
