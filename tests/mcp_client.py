"""An MCP client that nobody on this project wrote: the official Python SDK (`mcp`) drives
`buildvise serve` over stdio, as a third-party agent would.

Usage: mcp_client.py SCENARIO CWD -- SERVER_COMMAND...

Scenarios, each printing one JSON object of what it saw (results in their wire form) for
tests/mcp_python_client.rs to check; the checks live there, so that this script only speaks the
protocol:
- session: initialize, list the tools, `build` exec of cargo.build in CWD, then the `build` log
  call the answer's hint names.
- progress: `build` exec of pytest.run -v in CWD with a progress callback; every notification.
- leave: `build` exec of the config tool `slow` in CWD, and once its progress shows it started,
  leave: the SDK closes stdin, waits, and kills the server if it is still there.
- sigterm: the same exec, and once it started, SIGTERM to the server (whose pid the tool wrote
  to CWD/server.pid); what the pending call got.
"""

import asyncio
import json
import os
import signal
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def wire(model):
    """A pydantic model of the SDK as it travels on the wire (camelCase names, JSON values)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def hint_call(structured):
    """The `build` log call the answer's hint names: a JSON object, or the words of the call
    (`log startLine N lineCount M`) for the run the answer is about."""
    call = structured.get("hint") or ""
    if "{" in call:
        return json.loads(call[call.index("{"):])
    words = call.split()
    if not words or len(words) % 2 != 1:
        raise SystemExit(f"the exec answer has no hint naming a call: {structured!r}")
    args = {"action": words[0], "runId": structured["runId"]}
    for key, value in zip(words[1::2], words[2::2]):
        try:
            args[key] = json.loads(value)
        except ValueError:
            args[key] = value
    return args


async def session_scenario(session, cwd):
    init = await session.initialize()
    tools = await session.list_tools()
    executed = wire(await session.call_tool("build", {"action": "exec", "tool": "cargo.build", "cwd": cwd}))
    call = hint_call(executed.get("structuredContent") or {})
    logged = wire(await session.call_tool("build", call))
    return {
        "server": wire(init)["serverInfo"],
        "tools": [wire(t) for t in tools.tools],
        "exec": executed,
        "logCall": call,
        "log": logged,
    }


async def progress_scenario(session, cwd):
    await session.initialize()
    heard = []

    async def progress(value, total, message):
        heard.append({"progress": value, "total": total, "message": message})

    args = {"action": "exec", "tool": "pytest.run", "args": ["-v"], "cwd": cwd}
    executed = wire(await session.call_tool("build", args, progress_callback=progress))
    return {"exec": executed, "progress": heard}


async def start_slow(session, cwd):
    """Starts the `slow` tool; returns the pending call once its progress says it started."""
    await session.initialize()
    started = asyncio.Event()

    async def progress(value, total, message):
        started.set()

    call = asyncio.create_task(
        session.call_tool("build", {"action": "exec", "tool": "slow", "cwd": cwd}, progress_callback=progress)
    )
    await asyncio.wait_for(started.wait(), 60)
    return call


async def sigterm_scenario(session, cwd):
    call = await start_slow(session, cwd)
    with open(os.path.join(cwd, "server.pid")) as f:
        os.kill(int(f.read().strip()), signal.SIGTERM)
    try:
        got = wire(await asyncio.wait_for(call, 30))
    except Exception as e:  # the SDK's error for a server that went away mid-call
        got = {"error": type(e).__name__}
    return {"call": got}


SCENARIOS = {"session": session_scenario, "progress": progress_scenario, "sigterm": sigterm_scenario}


async def main(scenario, cwd, server):
    # The SDK passes only a few variables to the server by default; the test's environment
    # (its private state dir, the cargo target dir) must reach it.
    params = StdioServerParameters(command=server[0], args=server[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            if scenario == "leave":
                # The call stays pending: the client leaves without cancelling it, as one
                # that is closed or crashes does.
                pending = await start_slow(session, cwd)
                left = time.monotonic()
            else:
                report = await SCENARIOS[scenario](session, cwd)
    if scenario == "leave":
        # How long the SDK's shutdown (close stdin, wait, kill) took.
        report = {"closedInSecs": time.monotonic() - left, "callDone": pending.done()}
    print(json.dumps(report))


if __name__ == "__main__":
    if len(sys.argv) < 5 or sys.argv[3] != "--" or sys.argv[1] not in [*SCENARIOS, "leave"]:
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[4:]))
