#!/usr/bin/env node
// Validates Kubernetes manifests offline against the Kubernetes API schema.
//
//   node k8s_validate.js NODE_MODULES FILE.yaml...     ("-" reads stdin)
//
// NODE_MODULES holds kubernetes-models (the Kubernetes OpenAPI schema compiled to ajv
// validators, one class per apiVersion/kind) and js-yaml; tests/deploy/kubernetes_manifests.sh
// installs them with npm into a cache folder. Two checks per document:
//   1. schema: kubernetes-models' validate(): types, required fields, enums, formats;
//   2. unknown fields: the OpenAPI schema of Kubernetes does not forbid extra properties (the
//      API server drops or refuses them), so a misspelt field would pass 1. Every field is
//      looked up in the type declarations (.d.ts) of kubernetes-models, which list the
//      properties of each type; a field no type declares is an error (like kubectl's
//      --validate=strict, or kubeconform -strict).
// Prints one line per document; exit 0 when all pass, 1 otherwise, 2 on bad usage.
"use strict";
const fs = require("fs");
const path = require("path");

const [modules, ...files] = process.argv.slice(2);
if (!modules || files.length === 0) {
  console.error("usage: k8s_validate.js NODE_MODULES FILE.yaml...");
  process.exit(2);
}
const yaml = require(path.join(modules, "js-yaml"));
const modelsRoot = path.join(modules, "kubernetes-models");

// --- the property lists of the .d.ts files ------------------------------------------------
const interfaces = new Map(); // d.ts path -> {props: Map(name -> type text)} or null (no interface: an alias)

function resolveImport(fromFile, spec) {
  const base = spec.startsWith(".") ? path.resolve(path.dirname(fromFile), spec) : path.join(modules, spec);
  return base + ".d.ts";
}

function loadInterface(file) {
  if (interfaces.has(file)) return interfaces.get(file);
  let text;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    interfaces.set(file, null);
    return null;
  }
  const imports = new Map();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) imports.set(m[1], resolveImport(file, m[2]));
  const m = text.match(/^export interface \w+(?: extends TypeMeta)? \{\n([\s\S]*?)\n\}/m);
  if (!m) {
    interfaces.set(file, null);
    return null;
  }
  // Properties sit at 4 spaces; a map type ("{ [key: string]: T; }") spans lines at 8.
  const body = m[1].replace(/\/\*\*[\s\S]*?\*\//g, "");
  const props = new Map();
  if (/^export interface \w+ extends TypeMeta/m.test(text)) {
    props.set("apiVersion", "string");
    props.set("kind", "string");
  }
  for (const p of body.matchAll(/^    "([^"]+)"\??: ([^\n]*(?:\n {8}[^\n]*\n {4}\})?)/gm)) props.set(p[1], p[2]);
  const entry = { props, imports };
  interfaces.set(file, entry);
  return entry;
}

// The d.ts file of the interface a type text refers to, and how: "object", "array", "map".
function typeTarget(entry, typeText) {
  const ids = typeText.match(/\bI\w+/g) || [];
  const id = ids.find((i) => entry.imports.has(i));
  if (!id) return null;
  const file = entry.imports.get(id);
  if (/^\{\s*\[key: string\]/.test(typeText)) return { file, how: "map" };
  if (/^Array</.test(typeText)) return { file, how: "array" };
  return { file, how: "object" };
}

function unknownFields(value, file, where, errors) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  const entry = loadInterface(file);
  if (!entry) return;
  for (const [key, sub] of Object.entries(value)) {
    const typeText = entry.props.get(key);
    if (typeText === undefined) {
      errors.push(`${where}/${key}: unknown field (${path.basename(file, ".d.ts")} has ${[...entry.props.keys()].join(", ")})`);
      continue;
    }
    const target = typeTarget(entry, typeText);
    if (!target) continue;
    if (target.how === "array" && Array.isArray(sub)) sub.forEach((v, i) => unknownFields(v, target.file, `${where}/${key}/${i}`, errors));
    else if (target.how === "map" && sub && typeof sub === "object") {
      for (const [k, v] of Object.entries(sub)) unknownFields(v, target.file, `${where}/${key}/${k}`, errors);
    } else if (target.how === "object") unknownFields(sub, target.file, `${where}/${key}`, errors);
  }
}

// --- documents ----------------------------------------------------------------------------
function modelFile(doc) {
  if (!doc || typeof doc.apiVersion !== "string" || typeof doc.kind !== "string") return null;
  const [group, version] = doc.apiVersion.includes("/") ? doc.apiVersion.split("/") : [null, doc.apiVersion];
  const dir = group ? path.join(modelsRoot, group, version) : path.join(modelsRoot, version);
  return path.join(dir, doc.kind);
}

let failed = 0, count = 0;
for (const file of files) {
  const text = fs.readFileSync(file === "-" ? 0 : file, "utf8");
  let docs;
  try {
    docs = yaml.loadAll(text);
  } catch (e) {
    console.log(`FAIL ${file}: not YAML: ${e.message}`);
    failed++;
    continue;
  }
  for (const doc of docs) {
    if (doc === null || doc === undefined) continue;
    count++;
    const name = `${doc.kind || "?"}/${(doc.metadata && doc.metadata.name) || "?"}`;
    const base = modelFile(doc);
    let Model;
    try {
      Model = base && require(base)[doc.kind];
    } catch (e) {
      Model = null;
    }
    if (!Model) {
      console.log(`FAIL ${file}: ${name}: no schema for apiVersion ${doc.apiVersion} kind ${doc.kind}`);
      failed++;
      continue;
    }
    const errors = [];
    try {
      new Model(doc).validate();
    } catch (e) {
      for (const err of e.errors || [{ instancePath: "", message: e.message }])
        errors.push(`${err.instancePath || "/"}: ${err.message}${err.params ? " " + JSON.stringify(err.params) : ""}`);
    }
    unknownFields(doc, base + ".d.ts", "", errors);
    if (errors.length) {
      failed++;
      console.log(`FAIL ${file}: ${name} (${doc.apiVersion}):\n  ${errors.join("\n  ")}`);
    } else {
      console.log(`ok   ${name} (${doc.apiVersion})`);
    }
  }
}
if (count === 0) {
  console.log("FAIL: no documents");
  process.exit(1);
}
process.exit(failed ? 1 : 0);
