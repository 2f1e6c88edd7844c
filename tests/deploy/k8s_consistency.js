#!/usr/bin/env node
// What the schema cannot see in deploy/kubernetes: the rendered objects refer to each other
// and to files correctly.
//
//   node k8s_consistency.js NODE_MODULES RENDERED.yaml
//
// - every configMap/secret volume names a ConfigMap of the output (or the documented
//   meshperf-token Secret), every volumeMount a volume of the pod;
// - each path the containers run or read (meshperfd's --token-file and --config, the preStop
//   script, NPD's --config.custom-plugin-monitor and its rule's plugin path, the NPD binary)
//   lies in a mount of that container whose ConfigMap has that key (or the init container
//   fills it);
// - the node-problem-detector config is NPD's custom-plugin JSON: plugin "custom", each
//   rule's condition declared in conditions, timeouts as Go durations, rule timeout <= the
//   plugin timeout;
// - readiness and liveness probes GET /healthz on the port meshperfd listens on; hostNetwork.
// Exit 0 when all hold, 1 otherwise (every problem printed).
"use strict";
const fs = require("fs");
const path = require("path");
const [modules, file] = process.argv.slice(2);
const yaml = require(path.join(modules, "js-yaml"));
const docs = yaml.loadAll(fs.readFileSync(file, "utf8")).filter(Boolean);
const problems = [];
const bad = (m) => problems.push(m);

const configMaps = new Map(docs.filter((d) => d.kind === "ConfigMap").map((d) => [d.metadata.name, d.data || {}]));
const ds = docs.find((d) => d.kind === "DaemonSet" && d.metadata.name === "meshperfd");
if (!ds) {
  console.log("FAIL: no DaemonSet meshperfd");
  process.exit(1);
}
const pod = ds.spec.template.spec;
if (pod.hostNetwork !== true) bad("the pod does not use the host network");
const volumes = new Map((pod.volumes || []).map((v) => [v.name, v]));
for (const v of volumes.values()) {
  if (v.configMap && !configMaps.has(v.configMap.name)) bad(`volume ${v.name}: no ConfigMap ${v.configMap.name}`);
  if (v.secret && v.secret.secretName !== "meshperf-token") bad(`volume ${v.name}: Secret ${v.secret.secretName} is not the documented meshperf-token`);
}
const sa = pod.serviceAccountName;
if (sa && !docs.some((d) => d.kind === "ServiceAccount" && d.metadata.name === sa)) bad(`no ServiceAccount ${sa}`);
const binding = docs.find((d) => d.kind === "ClusterRoleBinding");
if (!binding || !binding.subjects.some((s) => s.name === sa && s.namespace === ds.metadata.namespace))
  bad(`no ClusterRoleBinding for ${ds.metadata.namespace}/${sa}`);

// Which file a path in a container is: [volume, key] or null.
function resolve(container, p) {
  for (const m of container.volumeMounts || []) {
    if (!volumes.has(m.name)) bad(`${container.name}: mount ${m.name} has no volume`);
    const dir = m.mountPath.replace(/\/$/, "");
    if (p.startsWith(dir + "/")) return [volumes.get(m.name), p.slice(dir.length + 1)];
  }
  return null;
}
function expectFile(container, p, what) {
  const r = resolve(container, p);
  if (!r) return bad(`${container.name}: ${what} ${p} is in no mount`);
  const [vol, key] = r;
  if (vol.configMap) {
    const data = configMaps.get(vol.configMap.name) || {};
    if (!(key in data)) bad(`${container.name}: ${what} ${p}: ConfigMap ${vol.configMap.name} has no key ${key} (has ${Object.keys(data)})`);
  } else if (vol.secret) {
    if (key !== "token") bad(`${container.name}: ${what} ${p}: the Secret's documented key is token, not ${key}`);
  } else if (vol.emptyDir) {
    const filled = (pod.initContainers || []).some((c) => (c.command || []).join(" ").includes(path.posix.join("/npd", key)));
    if (!filled) bad(`${container.name}: ${what} ${p}: nothing fills emptyDir ${vol.name}`);
  }
  return r;
}
const flag = (c, name) => {
  const a = (c.command || []).concat(c.args || []).find((x) => x.startsWith(name + "="));
  return a ? a.slice(name.length + 1) : null;
};

const d = pod.containers.find((c) => c.name === "meshperfd");
const npd = pod.containers.find((c) => c.name === "node-problem-detector");
if (!d || !npd) {
  console.log("FAIL: containers meshperfd and node-problem-detector expected");
  process.exit(1);
}
const listen = flag(d, "--listen");
const port = listen && Number(listen.split(":").pop());
if (!port) bad("meshperfd: no --listen=ADDR:PORT");
expectFile(d, flag(d, "--token-file") || "", "--token-file");
expectFile(d, flag(d, "--config") || "", "--config");
const pre = d.lifecycle && d.lifecycle.preStop && d.lifecycle.preStop.exec && d.lifecycle.preStop.exec.command;
if (!pre) bad("meshperfd: no preStop exec");
else expectFile(d, pre[pre.length - 1], "preStop script");
for (const probe of ["readinessProbe", "livenessProbe"]) {
  const g = d[probe] && d[probe].httpGet;
  if (!g || g.path !== "/healthz" || g.port !== port) bad(`meshperfd: ${probe} is not GET /healthz on port ${port}`);
}
const grace = pod.terminationGracePeriodSeconds || 30;
if (grace < 150 + 10) bad(`terminationGracePeriodSeconds ${grace} leaves prestop.sh (150 s) no room`);

expectFile(npd, npd.command[0], "NPD binary");
const monitorPath = flag(npd, "--config.custom-plugin-monitor");
const r = monitorPath && expectFile(npd, monitorPath, "--config.custom-plugin-monitor");
if (!(npd.env || []).some((e) => e.name === "NODE_NAME" && e.valueFrom && e.valueFrom.fieldRef && e.valueFrom.fieldRef.fieldPath === "spec.nodeName"))
  bad("node-problem-detector: NODE_NAME is not the node's name (downward API spec.nodeName)");
if (r && r[0].configMap) {
  const text = (configMaps.get(r[0].configMap.name) || {})[r[1]];
  let mon;
  try {
    mon = JSON.parse(text);
  } catch (e) {
    bad(`${monitorPath}: not JSON: ${e.message}`);
  }
  if (mon) {
    const dur = (s) => {
      const m = /^(\d+)(s|m|h)$/.exec(s || "");
      return m ? Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2]] : NaN;
    };
    if (mon.plugin !== "custom") bad(`${monitorPath}: plugin is ${mon.plugin}, not custom`);
    const pc = mon.pluginConfig || {};
    for (const k of ["invoke_interval", "timeout"]) if (!(dur(pc[k]) > 0)) bad(`${monitorPath}: pluginConfig.${k} ${pc[k]} is not a duration`);
    const types = new Set((mon.conditions || []).map((c) => c.type));
    if (!mon.rules || mon.rules.length === 0) bad(`${monitorPath}: no rules`);
    for (const rule of mon.rules || []) {
      if (rule.type !== "permanent" && rule.type !== "temporary") bad(`rule type ${rule.type}`);
      if (rule.type === "permanent" && !types.has(rule.condition)) bad(`rule condition ${rule.condition} not in conditions`);
      if (!(dur(rule.timeout) > 0) || dur(rule.timeout) > dur(pc.timeout)) bad(`rule timeout ${rule.timeout} vs plugin timeout ${pc.timeout}`);
      expectFile(npd, rule.path, "custom plugin");
      for (const c of [npd]) {
        const rr = resolve(c, rule.path);
        if (rr && rr[0].configMap && (rr[0].configMap.defaultMode & 0o111) === 0) bad(`${rule.path} is not executable (defaultMode)`);
      }
    }
    if (dur(pc.timeout) > dur(pc.invoke_interval)) bad("the plugin timeout exceeds its interval");
  }
}
if (problems.length) {
  console.log("FAIL:\n  " + problems.join("\n  "));
  process.exit(1);
}
console.log("ok   references: volumes, ConfigMap keys, token, preStop, probes, NPD binary, monitor JSON and plugin path");
