// The TypeScript SDK's client (its current release speaks up to 2025-11-25) for the era tests: it
// starts the command after "--" over stdio, lists the tools, makes the calls given as JSON in the
// first argument ([[tool, arguments], ...]) and prints what it saw as one JSON line.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const calls = JSON.parse(process.argv[2]);
const command = process.argv.slice(process.argv.indexOf("--") + 1);
const transport = new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env, stderr: "ignore" });
const client = new Client({ name: "era-tests-ts", version: "1" });
await client.connect(transport);
const listed = await client.listTools();
const results = [];
for (const [name, args] of calls) {
  const result = await client.callTool({ name, arguments: args });
  results.push([Boolean(result.isError), result.content[0].text]);
}
const tools = Object.fromEntries(listed.tools.map((tool) => [tool.name, tool.inputSchema]));
console.log(JSON.stringify({ tools, results }));
await client.close();
