// The JavaScript side of e2e/chat_template_corpus.sh.
//
//   node chat_template_check.mjs prepare TEMPLATES_DIR CONVERSATIONS.json WORK
//       writes WORK/contexts/<template>__<conversation>.json (the conversation plus the
//       template's bos/eos tokens, with transformers' defaults tools=None, documents=None,
//       add_generation_prompt=False) and WORK/pairs.tsv (name, template path, context path)
//   node chat_template_check.mjs render WORK/pairs.tsv OUT
//       renders every pair with @huggingface/jinja into OUT/<name>.out or OUT/<name>.err
//   node chat_template_check.mjs compare WORK
//       compares WORK/ours, WORK/jinja2 and WORK/hf byte for byte; exits 1 when ours differs
//       from Jinja2 (or one raises and the other does not); @huggingface/jinja's own
//       disagreements with Jinja2 are counted and listed as known reference differences.
import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";

const [mode, ...args] = process.argv.slice(2);

function prepare(templatesDir, conversationsPath, work) {
  const specials = JSON.parse(fs.readFileSync(path.join(templatesDir, "special_tokens.json"), "utf8"));
  const conversations = JSON.parse(fs.readFileSync(conversationsPath, "utf8"));
  const templates = fs.readdirSync(templatesDir).filter((f) => f.endsWith(".jinja")).sort();
  fs.mkdirSync(path.join(work, "contexts"), { recursive: true });
  const lines = [];
  for (const file of templates) {
    const name = file.replace(/\.jinja$/, "");
    const tokens = specials[name];
    if (!tokens) throw new Error(`${file} has no entry in special_tokens.json`);
    for (const conv of conversations) {
      const { name: convName, ...fields } = conv;
      const context = { tools: null, documents: null, add_generation_prompt: false, ...tokens, ...fields };
      const pair = `${name}__${convName}`;
      const contextPath = path.join(work, "contexts", `${pair}.json`);
      fs.writeFileSync(contextPath, JSON.stringify(context, null, 1));
      lines.push([pair, path.join(templatesDir, file), contextPath].join("\t"));
    }
  }
  fs.writeFileSync(path.join(work, "pairs.tsv"), lines.join("\n") + "\n");
  console.log(`prepared ${lines.length} pairs (${templates.length} templates x ${conversations.length} conversations)`);
}

function render(pairsPath, out) {
  fs.mkdirSync(out, { recursive: true });
  const compiled = new Map();
  for (const line of fs.readFileSync(pairsPath, "utf8").split("\n").filter(Boolean)) {
    const [pair, templatePath, contextPath] = line.split("\t");
    try {
      if (!compiled.has(templatePath)) compiled.set(templatePath, new Template(fs.readFileSync(templatePath, "utf8")));
      const { continue_final_message: cont, ...context } = JSON.parse(fs.readFileSync(contextPath, "utf8"));
      const rendered = compiled.get(templatePath).render(context);
      fs.writeFileSync(path.join(out, `${pair}.out`), cont ? continueFinalMessage(rendered, context.messages) : rendered);
    } catch (e) {
      fs.writeFileSync(path.join(out, `${pair}.err`), `error: ${e.message}\n`);
    }
  }
}

// transformers' continue_final_message cut (Python's str.strip() on ASCII whitespace).
function continueFinalMessage(rendered, messages) {
  let text = messages[messages.length - 1].content;
  if (Array.isArray(text)) {
    const part = [...text].reverse().find((b) => "text" in b);
    if (!part) throw new Error("continue_final_message: no text to continue in the final message");
    text = part.text;
  }
  const stripped = text.trim(), lstripped = text.trimStart();
  const at = rendered.lastIndexOf(stripped);
  if (at < 0) throw new Error("continue_final_message: the final message does not appear in the chat");
  if (rendered.slice(at, at + lstripped.length) === text) return rendered.slice(0, at + lstripped.length);
  return rendered.slice(0, at + stripped.length);
}

function result(dir, pair) {
  const out = path.join(dir, `${pair}.out`);
  if (fs.existsSync(out)) return { ok: true, text: fs.readFileSync(out) };
  const err = path.join(dir, `${pair}.err`);
  return { ok: false, text: fs.existsSync(err) ? fs.readFileSync(err) : Buffer.from("(no output)") };
}

function same(a, b) {
  return a.ok === b.ok && (!a.ok || a.text.equals(b.text));
}

function show(label, r) {
  return `  ${label} (${r.ok ? "rendered" : "raised"}): ${JSON.stringify(r.text.toString("utf8"))}`;
}

// The first line where two renderings part, for a readable failure message.
function firstDifference(a, b) {
  const x = a.toString("utf8").split("\n");
  const y = b.toString("utf8").split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i]) return `  first difference at line ${i + 1}:\n    ours:   ${JSON.stringify(x[i])}\n    jinja2: ${JSON.stringify(y[i])}`;
  return "";
}

function compare(work) {
  const pairs = fs.readFileSync(path.join(work, "pairs.tsv"), "utf8").split("\n").filter(Boolean).map((l) => l.split("\t")[0]);
  let oursSame = 0, hfSame = 0, raised = 0;
  const failures = [], hfDiffs = [];
  for (const pair of pairs) {
    const ours = result(path.join(work, "ours"), pair);
    const ref = result(path.join(work, "jinja2"), pair);
    const hf = result(path.join(work, "hf"), pair);
    if (!ref.ok) raised++;
    if (same(ours, ref)) oursSame++;
    else failures.push(`${pair}\n${show("ours", ours)}\n${show("jinja2", ref)}\n${ours.ok && ref.ok ? firstDifference(ours.text, ref.text) : ""}`);
    if (same(hf, ref)) hfSame++;
    else hfDiffs.push(`${pair}: @huggingface/jinja ${hf.ok ? "rendered differently" : "raised"}${ref.ok ? "" : " (jinja2 raised)"}${hf.ok ? "" : ": " + hf.text.toString("utf8").trim()}`);
  }
  if (hfDiffs.length) {
    console.log(`known reference differences (@huggingface/jinja vs jinja2, not failures): ${hfDiffs.length}`);
    for (const d of hfDiffs) console.log(`  ${d}`);
  }
  for (const f of failures.slice(0, 10)) console.log(`FAIL ${f}`);
  console.log(`${pairs.length} pairs: ${oursSame} identical to jinja2, ${hfSame} identical to @huggingface/jinja (${raised} pairs raise in jinja2, e.g. raise_exception)`);
  process.exit(failures.length ? 1 : 0);
}

if (mode === "prepare") prepare(...args);
else if (mode === "render") render(...args);
else if (mode === "compare") compare(...args);
else {
  console.error("usage: chat_template_check.mjs prepare|render|compare ...");
  process.exit(2);
}
