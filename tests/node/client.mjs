// A TypeScript-SDK MCP client for the interop tests: connect to reme-mcp, list the tools,
// call each of the five once, and print one JSON report on stdout.
//
//   node client.mjs stdio <command> [args...]
//   node client.mjs http <url> [bearer-token]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function transportFrom(argv) {
  const [mode, target, ...rest] = argv;
  if (mode === "stdio" && target) {
    return new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
  }
  if (mode === "http" && target) {
    const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  throw new Error("usage: client.mjs stdio <command> [args...] | http <url> [token]");
}

function textOf(result) {
  return (result.content ?? [])
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

async function call(client, report, name, args) {
  const result = await client.callTool({ name, arguments: args });
  report.calls[name] = {
    arguments: args,
    isError: Boolean(result.isError),
    structured: result.structuredContent ?? null,
    text: textOf(result),
  };
  return result;
}

async function main() {
  const client = new Client({ name: "reme-mcp-interop", version: "1.0.0" });
  await client.connect(transportFrom(process.argv.slice(2)));
  const report = { server: client.getServerVersion(), tools: [], calls: {} };
  try {
    const { tools } = await client.listTools();
    report.tools = tools.map((tool) => ({
      name: tool.name,
      readOnly: tool.annotations?.readOnlyHint ?? null,
      hasOutputSchema: Boolean(tool.outputSchema),
    }));

    const marker = `interop-${process.pid}-${Date.now()}`;
    const remembered = await call(client, report, "remember", {
      content: `This project's test passphrase is 蓝鲸-731 (${marker}).`,
      name: `test-passphrase-${marker}`,
      description: "The test passphrase used to check that memory works",
      request_id: marker,
    });
    const path = remembered.structuredContent?.path ?? "";
    await call(client, report, "search", { query: "蓝鲸-731" });
    await call(client, report, "read", { path });
    await call(client, report, "traverse", { path: "daily", depth: 2 });
    const day = path.split("/")[1] ?? "";
    await call(client, report, "daily_list", day ? { date: day } : {});
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((error) => {
  process.stderr.write(`client.mjs: ${error?.stack ?? error}\n`);
  process.exit(1);
});
