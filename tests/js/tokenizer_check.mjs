// Cross-checks pagedserve's tokenizer against @huggingface/tokenizers (an independent JS
// implementation) on the same tokenizer.json. Driven by tests/e2e/tokenizer_crosscheck.sh.
//
//   node tokenizer_check.mjs compare TOKENIZER.json INPUTS.txt CPP.jsonl
//       CPP.jsonl is `tokenize_jsonl encode TOKENIZER.json INPUTS.txt`; exits 1 on any
//       difference in ids (with and without add_special_tokens), decoded text, or decoded text
//       without special tokens. Byte-level tokenizers without a Unicode normalizer must also
//       round-trip every input in the reference; others need not (SentencePiece-style ones add a
//       "▁" after each special token, NFC recomposes characters), which is only counted.
//   node tokenizer_check.mjs variant KIND IN.json OUT.json
//       writes a variant of IN.json: pairs (merges as ["a","b"]); ignore_merges (flag on, plus
//       whole-word vocab entries that no merge reaches, so the flag changes ids); gpt2 (a lone
//       ByteLevel pre-tokenizer with use_regex true); llama3 (Llama 3's Split pattern, digits in
//       runs of up to three, plus digit merges so those runs matter); metaspace (a SentencePiece
//       file rewritten as transformers converts Llama/Mistral without "legacy": no normalizer, a
//       Metaspace pre-tokenizer with prepend_scheme "first" and split false).
import { readFileSync, writeFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

// Same rules as tests/tools/tokenize_jsonl.cpp: \n \r \t \\ \u{HEX}; anything else stays.
function unescape(line) {
  let out = "";
  for (let i = 0; i < line.length; ++i) {
    const c = line[i];
    if (c !== "\\" || i + 1 === line.length) {
      out += c;
      continue;
    }
    const n = line[i + 1];
    if (n === "n") out += "\n";
    else if (n === "r") out += "\r";
    else if (n === "t") out += "\t";
    else if (n === "\\") out += "\\";
    else if (n === "u" && line[i + 2] === "{" && line.indexOf("}", i + 3) !== -1) {
      const close = line.indexOf("}", i + 3);
      out += String.fromCodePoint(parseInt(line.slice(i + 3, close), 16));
      i = close;
      continue;
    } else out += "\\" + n;
    ++i;
  }
  return out;
}

function readInputs(path) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((line) => line.length > 0 && line[0] !== "#")
    .map(unescape);
}

function show(value) {
  return JSON.stringify(value);
}

function compare(tokenizerPath, inputsPath, cppPath) {
  const json = JSON.parse(readFileSync(tokenizerPath, "utf8"));
  const tokenizer = new Tokenizer(json, { clean_up_tokenization_spaces: false });
  const inputs = readInputs(inputsPath);
  const rows = readFileSync(cppPath, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l));
  if (rows.length !== inputs.length) {
    console.error(`${cppPath}: ${rows.length} rows for ${inputs.length} inputs in ${inputsPath}`);
    return 1;
  }
  // Byte-level BPE with no Unicode normalizer loses nothing, so every input must come back.
  const lossless =
    JSON.stringify(json.pre_tokenizer ?? null).includes('"ByteLevel"') &&
    !JSON.stringify(json.normalizer ?? null).includes('"NF');
  let matched = 0;
  let notRoundTrip = 0;
  const mismatches = [];
  inputs.forEach((input, i) => {
    const ids = tokenizer.encode(input, { add_special_tokens: false }).ids;
    const idsSpecial = tokenizer.encode(input, { add_special_tokens: true }).ids;
    const decode = (skip) =>
      ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: skip });
    const expected = { ids, ids_special: idsSpecial, text: decode(false), text_skip: decode(true) };
    const got = rows[i];
    const problems = [];
    if (show(got.ids) !== show(expected.ids)) problems.push("ids");
    if (show(got.ids_special) !== show(expected.ids_special)) problems.push("ids_special");
    if (got.text !== expected.text) problems.push("text");
    if (got.text_skip !== expected.text_skip) problems.push("text_skip");
    if (expected.text !== input) {
      if (lossless) problems.push("reference does not round-trip");
      else ++notRoundTrip;
    }
    if (problems.length === 0) {
      ++matched;
    } else {
      mismatches.push({ i, input, problems, expected, got });
    }
  });
  for (const m of mismatches.slice(0, 5)) {
    console.error(`MISMATCH input #${m.i} ${show(m.input)}: ${m.problems.join(", ")}`);
    console.error(`  @huggingface/tokenizers ids ${show(m.expected.ids)}`);
    console.error(`  pagedserve              ids ${show(m.got.ids)}`);
    if (m.problems.includes("ids_special")) {
      console.error(`  add_special_tokens: reference ${show(m.expected.ids_special)}`);
      console.error(`                      pagedserve ${show(m.got.ids_special)}`);
    }
    if (m.problems.includes("text") || m.problems.includes("text_skip")) {
      console.error(`  reference text ${show(m.expected.text)} / ${show(m.expected.text_skip)}`);
      console.error(`  pagedserve text ${show(m.got.text)} / ${show(m.got.text_skip)}`);
    }
  }
  const note = notRoundTrip > 0 ? ` (${notRoundTrip} do not round-trip in the reference either)` : "";
  console.log(`${tokenizerPath}: ${matched}/${inputs.length} inputs identical${note}`);
  return mismatches.length === 0 ? 0 : 1;
}

// GPT-2's byte -> character table, as the vocab files spell bytes.
const BYTE_CHARS = (() => {
  const chars = new Array(256);
  let shifted = 256;
  for (let b = 0; b < 256; ++b) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    chars[b] = String.fromCodePoint(printable ? b : shifted++);
  }
  return chars;
})();

function byteLevel(text) {
  return Array.from(new TextEncoder().encode(text), (b) => BYTE_CHARS[b]).join("");
}

function addToken(json, spelling) {
  const vocab = json.model.vocab;
  if (vocab[spelling] !== undefined) return;
  const ids = Object.values(vocab).concat(json.added_tokens.map((t) => t.id));
  vocab[spelling] = Math.max(...ids) + 1;
}

// Whole words (as the Qwen2 pattern cuts them) that the trained merges split into several tokens.
const WHOLE_WORDS = [" paged", " attention", "Hello", " world", "你好", "缓存块", " café", "😀",
  " Serving", "吞吐量", " naïve", "Привет", " cache", "hello"];

const LLAMA3_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

function variant(kind, inPath, outPath) {
  const json = JSON.parse(readFileSync(inPath, "utf8"));
  if (kind === "pairs") {
    json.model.merges = json.model.merges.map((m) => {
      const space = m.indexOf(" ");
      return [m.slice(0, space), m.slice(space + 1)];
    });
  } else if (kind === "ignore_merges") {
    json.model.ignore_merges = true;
    for (const word of WHOLE_WORDS) addToken(json, byteLevel(word));
  } else if (kind === "gpt2") {
    json.pre_tokenizer = {
      type: "ByteLevel",
      add_prefix_space: false,
      trim_offsets: true,
      use_regex: true,
    };
  } else if (kind === "llama3") {
    json.pre_tokenizer.pretokenizers[0].pattern = { Regex: LLAMA3_PATTERN };
    // Digit merges, lowest priority: "12" from "1 2", then "123" from "12 3" and so on.
    const digits = "0123456789";
    for (const a of digits) {
      for (const b of digits) {
        addToken(json, a + b);
        json.model.merges.push(`${a} ${b}`);
      }
    }
    for (const ab of ["12", "00", "20", "99", "45"]) {
      for (const c of digits) {
        addToken(json, ab + c);
        json.model.merges.push(`${ab} ${c}`);
      }
    }
  } else if (kind === "metaspace") {
    json.normalizer = null;
    json.pre_tokenizer = {
      type: "Metaspace",
      replacement: "\u2581",
      prepend_scheme: "first",
      split: false,
    };
  } else {
    console.error(`unknown variant ${kind} (pairs, ignore_merges, gpt2, llama3, metaspace)`);
    return 2;
  }
  writeFileSync(outPath, JSON.stringify(json, null, 2));
  return 0;
}

const [command, ...args] = process.argv.slice(2);
if (command === "compare" && args.length === 3) {
  process.exit(compare(...args));
} else if (command === "variant" && args.length === 3) {
  process.exit(variant(...args));
} else {
  console.error("usage: tokenizer_check.mjs compare TOKENIZER.json INPUTS.txt CPP.jsonl\n" +
    "       tokenizer_check.mjs variant pairs|ignore_merges|gpt2|llama3|metaspace IN.json OUT.json");
  process.exit(2);
}
