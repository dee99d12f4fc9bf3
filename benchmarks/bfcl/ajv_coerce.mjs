// Ajv 8 with coerceTypes, for the repair benchmark: each call validated (and coerced in place) against
// its tool's schema, timed per call inside node.
// stdin:  {"tools": {"id": schema, ...}, "cases": [{"tool": "id", "sent": {...}}, ...], "rounds": 3}
// stdout: {"version": "8.x", "results": [{"arguments": {...} | null, "ns": best of rounds}, ...]}
// Ajv is the one installed for the tests: npm ci --prefix tests/ajv
import { createRequire } from "node:module";

const require = createRequire(new URL("../../tests/ajv/package.json", import.meta.url));
const Ajv = require("ajv").default;
const { version } = require("ajv/package.json");

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { tools, cases, rounds } = JSON.parse(Buffer.concat(chunks).toString("utf8"));

// Draft-07, as hosts construct it; unknown formats are ignored rather than refused.
const ajv = new Ajv({ coerceTypes: true, strict: false, validateFormats: false, logger: false });
const validators = new Map();
for (const [id, schema] of Object.entries(tools)) validators.set(id, ajv.compile(schema));

const results = cases.map(() => ({ arguments: null, ns: Number.POSITIVE_INFINITY }));
for (let round = 0; round < rounds; round++) {
  cases.forEach(({ tool, sent }, index) => {
    const validate = validators.get(tool);
    const data = structuredClone(sent); // Ajv coerces in place: each round starts from what was sent
    const start = process.hrtime.bigint();
    const valid = validate(data);
    const ns = Number(process.hrtime.bigint() - start);
    const result = results[index];
    result.ns = Math.min(result.ns, ns);
    if (round === 0) result.arguments = valid ? data : null;
  });
}
process.stdout.write(JSON.stringify({ version, results }));
