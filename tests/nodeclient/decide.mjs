// For each [NO_PROXY, URL] pair read as JSON on stdin, print (a JSON array) whether
// a Node.js NO_PROXY implementation goes "direct" or through the "proxy" (undici:
// "invalid" when WHATWG URL rejects the URL, so no request is made at all).
//
//   node decide.mjs undici|proxy-from-env NODE_MODULES_PARENT < cases.json
//
// Only public APIs are used, and NO_PROXY is read from the environment as in a pod:
// - proxy-from-env: getProxyForUrl(url) returns "" when the URL goes direct (also when
//   WHATWG URL cannot parse it, e.g. "www.127.0.0.1").
// - undici: EnvHttpProxyAgent's choice is private, so a real fetch() is made through
//   it. Its direct Agent connects with our `connect` function (a documented Agent
//   option), which records the call and fails at once; the proxy is a local listener
//   on 127.0.0.1 that counts requests and refuses them. Nothing leaves the machine.
import { createServer } from "node:http";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";

const [client, prefix] = process.argv.slice(2);
const require = createRequire(join(resolve(prefix), "package.json"));
const cases = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk) => (text += chunk));
  process.stdin.on("end", () => resolve(text));
}));

for (const name of Object.keys(process.env)) {
  if (name.toLowerCase().endsWith("_proxy")) delete process.env[name];
}

function setNoProxy(value) {
  process.env.no_proxy = value;
  process.env.NO_PROXY = value;
}

async function proxyFromEnv() {
  const { getProxyForUrl } = require("proxy-from-env");
  process.env.http_proxy = process.env.https_proxy = "http://127.0.0.1:3128";
  return cases.map(([value, url]) => {
    setNoProxy(value);
    return getProxyForUrl(url) === "" ? "direct" : "proxy";
  });
}

async function undici() {
  const { EnvHttpProxyAgent, fetch } = require("undici");
  let proxied = 0;
  const server = createServer((req, res) => {
    proxied++;
    res.writeHead(403).end();
  });
  server.on("connect", (req, socket) => {
    proxied++;
    socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const proxy = `http://127.0.0.1:${server.address().port}`;
  const result = [];
  for (const [value, url] of cases) {
    if (!URL.canParse(url)) {
      result.push("invalid"); // fetch rejects it before any proxy decision
      continue;
    }
    setNoProxy(value);
    let direct = 0;
    const connect = (options, callback) => {
      direct++;
      callback(new Error("direct connection refused by the test"), null);
    };
    const agent = new EnvHttpProxyAgent({ httpProxy: proxy, httpsProxy: proxy, connect });
    const before = proxied;
    try {
      await fetch(url, { dispatcher: agent, signal: AbortSignal.timeout(5000) });
    } catch {
      // both paths fail by design; which one was taken is what counts
    }
    await agent.close().catch(() => {});
    const viaProxy = proxied > before;
    if (viaProxy === (direct > 0)) {
      throw new Error(`${value} ${url}: direct=${direct}, proxy requests=${proxied - before}`);
    }
    result.push(viaProxy ? "proxy" : "direct");
  }
  server.close();
  return result;
}

const run = { undici, "proxy-from-env": proxyFromEnv }[client];
if (!run) throw new Error(`unknown client ${client}`);
process.stdout.write(JSON.stringify(await run()) + "\n");
