// Runs the hosts' own code that npm ships on tool schemas and arguments, for tests/hosts.
// stdin:  {"cases": [{"host": "gemini-cli" | "qwen-code" | "vscode", "schema": {...}, "calls": [{...}, ...]}]}
// stdout: {"results": [{"schema": {...}, "calls": [{"sent": true, "arguments": {...}} | {"sent": false, "error": "..."}]}]}
//
// gemini-cli: @google/gemini-cli-core's discoverTools (its schema rewrite) over a stand-in MCP client,
//   then its SchemaValidator.validate on each call, as DiscoveredMCPTool.build does.
// qwen-code:  @qwen-code/qwen-code's SchemaValidator.validate (validation, its four repair passes, validation).
// vscode:     Ajv 8.18.0 (the version in vscode-copilot-chat's lockfile) with { coerceTypes: true }, run the
//   way BaseToolsService.validateToolInput runs it: compile once (no validation if that fails), validate the
//   parsed input in place, and once a type error says an object or array was expected where a string is,
//   parse that string as JSON and validate again.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Ajv from "ajv";

const here = dirname(fileURLToPath(import.meta.url));
const silent = () => {};
console.log = console.info = console.warn = console.debug = silent; // host loggers must not reach stdout

async function geminiCli() {
  const { discoverTools } = await import("@google/gemini-cli-core/dist/src/tools/mcp-client.js");
  const { SchemaValidator } = await import("@google/gemini-cli-core/dist/src/utils/schemaValidator.js");
  const diagnostics = [];
  const cliConfig = {
    emitMcpDiagnostic: (...args) => diagnostics.push(args),
    getDebugMode: () => false,
    sanitizationConfig: {},
  };
  return async (schema, calls) => {
    const client = {
      getServerCapabilities: () => ({ tools: {} }),
      listTools: async () => ({ tools: [{ name: "probe", description: "", inputSchema: structuredClone(schema) }] }),
    };
    const tools = await discoverTools("probe-server", {}, client, cliConfig, undefined, {});
    if (tools.length !== 1) throw new Error(`discoverTools returned ${tools.length} tools: ${JSON.stringify(diagnostics)}`);
    const listed = (await tools[0].mcpTool.tool()).functionDeclarations[0].parametersJsonSchema;
    return {
      schema: listed,
      calls: calls.map((args) => {
        const copy = structuredClone(args);
        const error = SchemaValidator.validate(listed, copy);
        return error ? { sent: false, error } : { sent: true, arguments: copy };
      }),
    };
  };
}

async function qwenCode() {
  const chunks = join(here, "node_modules", "@qwen-code", "qwen-code", "chunks");
  const file = readdirSync(chunks).find((name) => readFileSync(join(chunks, name), "utf8").includes("var SchemaValidator = class"));
  if (!file) throw new Error("Qwen Code's SchemaValidator not found in its bundle");
  const { SchemaValidator } = await import(join(chunks, file));
  return async (schema, calls) => ({
    schema,
    calls: calls.map((args) => {
      const copy = structuredClone(args);
      const error = SchemaValidator.validate(schema, copy);
      return error ? { sent: false, error } : { sent: true, arguments: copy };
    }),
  });
}

function atPointer(root, pointer) {
  const parts = pointer.split("/").slice(1);
  let node = root;
  for (const part of parts.slice(0, -1)) {
    if (!node || typeof node !== "object" || !Object.hasOwn(node, part)) return null;
    node = node[part];
  }
  return node && typeof node === "object" && parts.length ? { parent: node, name: parts.at(-1) } : null;
}

function vscodeValidate(validate, input) {
  if (validate(input ?? {})) return { sent: true, arguments: input };
  let reparsed = false;
  for (const error of validate.errors ?? []) {
    const wantsStructure = error.keyword === "type" && ["object", "array"].includes(error.params?.type);
    const place = wantsStructure && error.instancePath ? atPointer(input, error.instancePath) : null;
    if (!place) continue;
    try {
      const parsed = JSON.parse(place.parent[place.name]);
      if (typeof parsed === "object" && parsed !== null) {
        place.parent[place.name] = parsed;
        reparsed = true;
      }
    } catch {}
  }
  return reparsed ? vscodeValidate(validate, input) : { sent: false, error: "ERROR: Your input to the tool was invalid" };
}

async function vscode() {
  return async (schema, calls) => {
    const ajv = new Ajv({ coerceTypes: true, logger: false });
    let validate;
    try {
      validate = ajv.compile(structuredClone(schema));
    } catch (error) {
      return { schema, compile_error: String(error.message), calls: calls.map((args) => ({ sent: true, arguments: args })) };
    }
    return { schema, compile_error: null, calls: calls.map((args) => vscodeValidate(validate, structuredClone(args))) };
  };
}

const hosts = { "gemini-cli": geminiCli, "qwen-code": qwenCode, vscode };
const input = [];
for await (const chunk of process.stdin) input.push(chunk);
const { cases } = JSON.parse(Buffer.concat(input).toString("utf8"));
const runners = {};
const results = [];
for (const { host, schema, calls } of cases) {
  runners[host] ??= await hosts[host]();
  results.push(await runners[host](schema, calls));
}
// Exit once stdout has drained: host modules leave timers and sockets open.
process.stdout.write(JSON.stringify({ results }), () => process.exit(0));
