#!/usr/bin/env node
// The `buildvise` command of the npm package: it finds the binary in the package npm installed
// for this platform (one of the optional dependencies, each limited by its `os`, `cpu` and `libc`
// fields, so npm installs only the one that fits) and runs it with this process's arguments,
// standard streams and environment. The binary finds its plugins beside it, in that package.
"use strict";

const { spawn } = require("node:child_process");
const path = require("node:path");

// Each platform's package, the musl one last on Linux: it is static and runs on any Linux,
// so it serves where npm installed both (an npm too old to read `libc`).
const PACKAGES = {
  "linux x64": ["@buildvise/linux-x64", "@buildvise/linux-x64-musl"],
  "linux arm64": ["@buildvise/linux-arm64", "@buildvise/linux-arm64-musl"],
  "darwin x64": ["@buildvise/darwin-x64"],
  "darwin arm64": ["@buildvise/darwin-arm64"],
  "win32 x64": ["@buildvise/win32-x64"],
};

function binary() {
  const platform = `${process.platform} ${process.arch}`;
  const candidates = PACKAGES[platform];
  if (!candidates) {
    fail(`buildvise has no binary for ${platform}; build it from source (docs/install.md)`);
  }
  const exe = process.platform === "win32" ? "buildvise.exe" : "buildvise";
  for (const name of candidates) {
    try {
      return path.join(path.dirname(require.resolve(`${name}/package.json`)), "bin", exe);
    } catch (error) {
      if (error.code !== "MODULE_NOT_FOUND") throw error;
    }
  }
  fail(
    `the package with buildvise's binary for ${platform} (${candidates.join(" or ")}) is not installed; ` +
      "install again without --no-optional / --omit=optional"
  );
}

function fail(message) {
  process.stderr.write(`buildvise: ${message}\n`);
  process.exit(125);
}

// How buildvise was started, for `mcp install` and `hook install` to write the same command:
// from npx's cache (gone once npx is done) it must be `npx -y buildvise`; from a project's or a
// global install, the installed command.
const launcher = __dirname.split(path.sep).includes("_npx") ? "npx" : "npm";
const child = spawn(binary(), process.argv.slice(2), {
  stdio: "inherit",
  env: { BUILDVISE_LAUNCHER: launcher, ...process.env },
});

// A client that stops the server signals this process: pass the signal on, so that buildvise
// ends its runs and stores them rather than being left running.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => child.kill(signal));
}

child.on("error", (error) => fail(`cannot run ${child.spawnfile}: ${error.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    // End the way the binary ended, so that the caller sees the same signal.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code);
  }
});
