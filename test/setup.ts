/**
 * Preloaded before every test file (bunfig.toml). End-to-end tests spawn real
 * CLI processes; on a loaded 2-core machine Bun's 5 s default per test is too
 * tight, so the default is raised here (bunfig's own test timeout key is not
 * honoured by Bun 1.4.5).
 */
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(120_000);
