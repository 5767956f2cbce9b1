/**
 * `spoolctl config show|validate|get|set|unset`, reached as `config <action>`
 * (rewritten to `config-<action>` by the registry) or by the hyphenated names.
 * Settings live in the queue database, so every worker sees them.
 */
import type { VerbResult } from "../contract/envelope.ts";
import type { FlagDef } from "../contract/flags.ts";
import type { ConfigShowData, SettingSet, SettingUnset } from "../describe/schemas-operator.ts";
import { NO_TIMEOUT } from "../model/limits.ts";
import { SETTING_KEYS } from "../model/settings.ts";
import { type ConfigValidation, parseSetting, type SettingView, settingKey } from "../ops/config.ts";
import { describeLocation, validateConfig } from "../store/location-report.ts";
import { allSettings, setSetting, settingOf, unsetSetting } from "../store/verbs/settings.ts";
import { COMMON_FLAGS, defineVerb } from "./verb.ts";

const KEY_HINT = `${SETTING_KEYS.join(", ")} (dashes or underscores)`;
const KEYS = `keys: ${SETTING_KEYS.join(", ")}; dashes or underscores`;

/** The setting-key positional of `config <action>`; `usage` is the rest of the command line, for the remediation. */
function keyPositional(action: string, usage: string) {
  return {
    type: "positional",
    description: KEY_HINT,
    valueHint: "KEY",
    required: true,
    choices: SETTING_KEYS,
    looseChoices: true,
    noun: "a setting key",
    hint: `spoolctl config ${action} ${usage}   (${KEYS})`,
  } as const satisfies FlagDef;
}

const KEY_WIDTH = Math.max(...SETTING_KEYS.map((k) => k.length));

function settingLine(s: SettingView): string {
  const when =
    s.applies_at === "add"
      ? "copied into jobs when added"
      : s.applies_at === "run"
        ? "read when a worker starts"
        : "read when a retry is scheduled";
  return `${s.key.padEnd(KEY_WIDTH)} ${(s.key === "timeout" && s.value === NO_TIMEOUT ? "none" : String(s.value)).padEnd(8)} ${s.source === "default" ? "(default)" : "(set)    "}  ${when}`;
}

/** `config show`. */
export const show = defineVerb({
  name: "config-show",
  aliases: ["config show"],
  description:
    "Show where the queue database is and why (--db > SPOOLCTL_DB > .spoolctl/config.json > default), and the queue-wide settings: which are copied into jobs when added, which are read at retry time.",
  examples: ["spoolctl config show", "spoolctl config show --json", "spoolctl config show --db /tmp/q.db"],
  flags: { ...COMMON_FLAGS },
  async run(ctx): Promise<VerbResult<ConfigShowData>> {
    const { db_path, db_source, spool_dir, ...rest } = describeLocation(ctx.args.db);
    const settings =
      db_path === null
        ? null
        : Object.fromEntries((await allSettings(await ctx.open({ create: false }))).map((s) => [s.key, s]));
    return { data: { ...rest, sources: { db_path: db_source }, values: { db_path, spool_dir }, settings } };
  },
  render({ data }) {
    const lines = [
      `database     ${data.values.db_path ?? "(unresolved)"}${data.sources.db_path ? `  (from ${data.sources.db_path})` : ""}`,
      `spool        ${data.values.spool_dir ?? "-"}`,
      `config file  ${data.config_path}${data.config_exists ? (data.config_valid ? "" : `  INVALID: ${data.config_problem}`) : "  (none)"}`,
      `precedence   ${data.precedence.join(" > ")}`,
    ];
    if (data.ignored_keys.length) lines.push(`ignored keys ${data.ignored_keys.join(", ")}`);
    if (data.settings) lines.push("", "settings:", ...Object.values(data.settings).map(settingLine));
    return lines.join("\n");
  },
});

/** `config validate [PATH]`. */
export const validate = defineVerb({
  name: "config-validate",
  aliases: ["config validate"],
  description:
    "Check a project config file (default ./.spoolctl/config.json) without opening the queue. Invalid: INVALID_INPUT with the findings in detail.",
  examples: ["spoolctl config validate", "spoolctl config validate ci/spoolctl.json --json"],
  flags: {
    json: COMMON_FLAGS.json,
    path: {
      type: "positional",
      required: false,
      description: "config file (default ./.spoolctl/config.json)",
      valueHint: "PATH",
      valueType: "path",
      noun: "a PATH",
    },
  },
  run(ctx): VerbResult<ConfigValidation> {
    return { data: validateConfig(ctx.args.path) };
  },
  render({ data }) {
    if (!data.exists) return `no config file at ${data.config_path} (defaults apply)`;
    return `${data.config_path} is valid${data.unknown_keys.length ? `; unknown keys ignored: ${data.unknown_keys.join(", ")}` : ""}`;
  },
});

/** `config get KEY`. */
export const get = defineVerb({
  name: "config-get",
  aliases: ["config get"],
  description: `Print one queue-wide setting: ${KEY_HINT}.`,
  examples: ["spoolctl config get max-retries", "spoolctl config get backoff_cap --json"],
  flags: { ...COMMON_FLAGS, key: keyPositional("get", "KEY") },
  async run(ctx): Promise<VerbResult<SettingView>> {
    const { key } = ctx.args;
    return { data: await settingOf(await ctx.open({ create: false }), key) };
  },
  render({ data }) {
    return data.key === "timeout" && data.value === NO_TIMEOUT ? "none" : String(data.value);
  },
});

/** A setting's value as a person writes it: `on`/`off` for a switch (`retry_spawn_failures`), `none` for a timeout of 0 (no limit), else the number. */
function valueText(unit: string, value: number, key = ""): string {
  if (key === "timeout" && value === NO_TIMEOUT) return "none";
  return unit === "switch" ? (value ? "on" : "off") : String(value);
}

/** `config set KEY VALUE`. */
export const set = defineVerb({
  name: "config-set",
  aliases: ["config set"],
  description:
    "Set a queue-wide setting in the database. max_retries and timeout are copied into jobs when they are added (new jobs only); backoff_base, backoff_cap and retry_spawn_failures are read when a retry is scheduled (queued jobs too).",
  examples: [
    "spoolctl config set max-retries 5",
    "spoolctl config set timeout 10m",
    "spoolctl config set backoff-base 3",
    "spoolctl config set backoff-cap 2m",
  ],
  mutates: true,
  flags: {
    ...COMMON_FLAGS,
    key: keyPositional("set", "KEY VALUE"),
    value: {
      type: "positional",
      description:
        "an integer (max_retries), a number (backoff_base) or a duration (timeout, backoff_cap; timeout also none: no time limit)",
      valueHint: "VALUE",
      required: true,
      noun: "a value",
      hint: `spoolctl config set KEY VALUE   (${KEYS})`,
    },
  },
  async run(ctx): Promise<VerbResult<SettingSet>> {
    // The value's grammar depends on the key (an integer, a number or a duration): the setting's own rule checks it.
    return { data: await setSetting(await ctx.open({ create: true }), parseSetting(ctx.args.key, ctx.args.value)) };
  },
  render({ data }, ctx) {
    const applies =
      data.applies_at === "add"
        ? "applies to jobs added from now on"
        : data.applies_at === "run"
          ? "applies to workers started from now on"
          : "applies to the next retry scheduled";
    // On SQLite nothing is shipped: output stays in local files, which output_cap never bounds (README "Many machines").
    const said =
      data.key === "output_cap" && ctx.location().url === undefined
        ? "applies to shipped output only: this SQLite queue ships none (its output stays in local files, which have no cap)"
        : applies;
    return `${data.key} = ${valueText(data.unit, data.value, data.key)} (was ${valueText(data.unit, data.previous, data.key)}); ${said}`;
  },
});

/** `config unset KEY`. */
export const unset = defineVerb({
  name: "config-unset",
  aliases: ["config unset"],
  description: "Remove a queue-wide setting so its default applies again.",
  examples: ["spoolctl config unset max-retries"],
  mutates: true,
  flags: { ...COMMON_FLAGS, key: keyPositional("unset", "KEY") },
  async run(ctx): Promise<VerbResult<SettingUnset>> {
    return { data: await unsetSetting(await ctx.open({ create: false }), settingKey(ctx.args.key)) };
  },
  render({ data }) {
    const value = valueText(data.unit, data.value, data.key);
    return data.removed ? `${data.key} reset to its default ${value}` : `${data.key} was not set (default ${value})`;
  },
});
