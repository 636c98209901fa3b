"""An MCP client that nobody on this project wrote: the official Python SDK (`mcp`) drives
`buildvise serve` over stdio, as a third-party agent would.

Usage: mcp_client.py CWD -- SERVER_COMMAND...

It initializes, lists the tools, runs `build` exec of cargo.build in CWD, follows the hint of the
answer with a `build` log call, and prints one JSON object of what it saw (results in their wire
form) for tests/mcp_python_client.rs to check. The checks live there, so that this script only
speaks the protocol.
"""

import asyncio
import json
import os
import sys

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


async def main(cwd, server):
    # The SDK passes only a few variables to the server by default; the test's environment
    # (its private state dir, the cargo target dir) must reach it.
    params = StdioServerParameters(command=server[0], args=server[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            executed = wire(await session.call_tool("build", {"action": "exec", "tool": "cargo.build", "cwd": cwd}))
            call = hint_call(executed.get("structuredContent") or {})
            logged = wire(await session.call_tool("build", call))
    print(
        json.dumps(
            {
                "server": wire(init)["serverInfo"],
                "tools": [wire(t) for t in tools.tools],
                "exec": executed,
                "logCall": call,
                "log": logged,
            }
        )
    )


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[3:]))
