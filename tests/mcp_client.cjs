// An MCP client nobody on this project wrote: the official TypeScript SDK
// (`@modelcontextprotocol/sdk`) drives `buildvise serve` over stdio, as a Node agent would, and
// Ajv, a JSON Schema validator of its own, judges every structured result against the tool's
// `outputSchema`.
//
// Usage: node mcp_client.cjs SCENARIO CWD -- SERVER_COMMAND...
// (NODE_PATH names the node_modules the test installed.)
//
// Scenarios, each printing one JSON object of what it saw for tests/mcp_typescript_client.rs to
// check; the checks live there, so that this script only speaks the protocol:
// - schema: tools/list, then calls of every action and detail level in CWD (whose buildvise.toml
//   defines `ci.check`, `ok` and `slow`); each result with Ajv's verdict on its
//   structuredContent.
// - silent: `build` exec of `quiet` in CWD (a tool that prints a line and then nothing for 90 s)
//   with the SDK's default request timeout, resetting it on progress, as clients that run long
//   tools do; the result, the notifications and how long the call took.

"use strict";

const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { CallToolResultSchema } = require("@modelcontextprotocol/sdk/types.js");
const Ajv = require("ajv").default;

async function schemaScenario(client, cwd) {
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === "build");
  const validate = new Ajv({ strict: false, allErrors: true }).compile(tool.outputSchema);
  const calls = [];
  const call = async (args) => {
    let result;
    try {
      result = await client.callTool({ name: "build", arguments: args });
    } catch (e) {
      // The SDK checks structuredContent against outputSchema itself and throws when it fails.
      calls.push({ args, thrown: String(e) });
      return {};
    }
    const structured = result.structuredContent;
    const valid = structured !== undefined && validate(structured);
    calls.push({ args, isError: result.isError === true, text: result.content?.[0]?.text, structured, valid, errors: validate.errors });
    return structured || {};
  };
  await call({ action: "list", cwd });
  const failed = await call({ action: "exec", tool: "ci.check", args: ["x"], cwd });
  await call({ action: "exec", tool: "ci.check", args: ["x"], cwd, detail: "summary" });
  await call({ action: "exec", tool: "ci.check", args: ["x"], cwd, detail: "full" });
  await call({ action: "exec", tool: "ok", cwd, timeout: 1e20 });
  await call({ action: "exec", tool: "slow", cwd, timeout: 1 });
  const runId = failed.runId;
  await call({ action: "log", runId });
  await call({ action: "log", runId, startLine: 0, lineCount: 2 });
  await call({ action: "log", runId, grep: "error" });
  await call({ action: "log", runId, detail: "full" });
  return { tool, calls };
}

async function silentScenario(client, cwd) {
  const heard = [];
  const started = Date.now();
  let result;
  try {
    // No timeout given: the SDK's default (60 s) applies, started again by each notification.
    result = await client.callTool({ name: "build", arguments: { action: "exec", tool: "quiet", cwd } }, CallToolResultSchema, {
      onprogress: (p) => heard.push({ ...p, atSecs: (Date.now() - started) / 1000 }),
      resetTimeoutOnProgress: true,
    });
  } catch (e) {
    result = { thrown: String(e) };
  }
  return { result, progress: heard, seconds: (Date.now() - started) / 1000 };
}

const SCENARIOS = { schema: schemaScenario, silent: silentScenario };

async function main() {
  const [scenario, cwd, dashes, command, ...args] = process.argv.slice(2);
  if (!SCENARIOS[scenario] || dashes !== "--" || !command) {
    console.error("usage: node mcp_client.cjs schema|silent CWD -- SERVER_COMMAND...");
    process.exit(2);
  }
  // The SDK passes only a few variables to the server by default; the test's environment (its
  // private state dir) must reach it.
  const transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
  const client = new Client({ name: "buildvise-test", version: "0" });
  await client.connect(transport);
  const report = await SCENARIOS[scenario](client, cwd);
  await client.close();
  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
