import pkg from "../../package.json" with { type: "json" };

/** The package version, reported as `tool_version` and by `--version`. */
export const TOOL_VERSION: string = pkg.version;
