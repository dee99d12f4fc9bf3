// Validates JSON values against JSON schemas with Ajv 8, the validator JS hosts run, or with zod's
// fromJSONSchema (hosts that turn a tool schema into zod) when a case says "validator": "zod".
// stdin:  {"cases": [{"schema": {...}, "values": [...], "draft": "2020-12" | "07", "options": {...}, "validator"?: "zod"}]}
// stdout: {"results": [{"compile_error": null | "message", "verdicts": [true, false, ...]}]}
import Ajv from "ajv";
import Ajv2020 from "ajv/dist/2020.js";
import { z } from "zod";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const { cases } = JSON.parse(Buffer.concat(chunks).toString("utf8"));

function withZod(schema, values) {
  let parser;
  try {
    parser = z.fromJSONSchema(schema);
  } catch (error) {
    return { compile_error: String(error.message), verdicts: [] };
  }
  return { compile_error: null, verdicts: values.map((value) => parser.safeParse(value).success) };
}

const results = cases.map(({ schema, values, draft, options, validator }) => {
  if (validator === "zod") return withZod(schema, values);
  const AjvClass = draft === "07" ? Ajv : Ajv2020;
  // Hosts do not install ajv-formats; unknown formats are ignored rather than refused.
  const ajv = new AjvClass({ validateFormats: false, logger: false, ...options });
  let validate;
  try {
    validate = ajv.compile(schema);
  } catch (error) {
    return { compile_error: String(error.message), verdicts: [] };
  }
  return { compile_error: null, verdicts: values.map((value) => validate(value) === true) };
});
process.stdout.write(JSON.stringify({ results }));
