// Fetches each URL with a Node.js client that takes its proxy from the environment,
// printing the status or the error (tests/squidlab.py watches where the requests went):
//
//   node fetch.mjs undici|proxy-from-env NODE_MODULES_PARENT URL...
//
// - undici: fetch() through EnvHttpProxyAgent (HTTP_PROXY, HTTPS_PROXY, NO_PROXY from
//   the environment; it sends the proxy URL's user and password, percent-decoded, as
//   Proxy-Authorization).
// - proxy-from-env: getProxyForUrl(url) decides; the request itself is node:http, to
//   the proxy in absolute form with the proxy URL's user and password percent-decoded
//   into Proxy-Authorization, as an axios-like client does (the decoding is this
//   file's, not the package's: proxy-from-env only returns the URL).
import { request } from "node:http";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const [client, prefix, ...urls] = process.argv.slice(2);
const require = createRequire(join(resolve(prefix), "package.json"));

function get(options) {
  return new Promise((done, fail) => {
    const req = request({ ...options, timeout: 5000 }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", fail);
    req.end();
  });
}

async function viaProxyFromEnv(url) {
  const { getProxyForUrl } = require("proxy-from-env");
  const proxy = getProxyForUrl(url);
  const target = new URL(url);
  if (proxy === "") {
    return get({ host: target.hostname, port: target.port || 80, path: target.pathname });
  }
  const p = new URL(proxy);
  const headers = { host: target.host };
  if (p.username || p.password) {
    const pair = `${decodeURIComponent(p.username)}:${decodeURIComponent(p.password)}`;
    headers["proxy-authorization"] = "Basic " + Buffer.from(pair).toString("base64");
  }
  return get({ host: p.hostname, port: p.port || 80, path: url, headers });
}

async function viaUndici(url, agent) {
  const { fetch } = require("undici");
  const res = await fetch(url, { dispatcher: agent, signal: AbortSignal.timeout(5000) });
  await res.arrayBuffer();
  return res.status;
}

const agent = client === "undici" ? new (require("undici").EnvHttpProxyAgent)() : null;
for (const url of urls) {
  try {
    const status = agent ? await viaUndici(url, agent) : await viaProxyFromEnv(url);
    console.log(url, status);
  } catch (error) {
    console.log(url, "error:", error.message);
  }
}
if (agent) await agent.close();
