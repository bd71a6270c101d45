// Many anonymous customers from one address (docs/performance.md "Many anonymous customers from one address"):
//   node scripts/lib/anonymous-abuse.mjs PORT LOCAL_ADDRESS TOKENS MILLISECONDS
// takes TOKENS anonymous tokens from LOCAL_ADDRESS (127.0.0.x reaches a box on 127.0.0.1), and with each grows an
// order to 400 lines (a `new` and an `append` of 200, the most a command takes) and then changes one of its lines
// as fast as the box answers, for MILLISECONDS. Prints one JSON line: the answers by status (429s by the option
// that refused them). Its own process, so that its loops do not delay the honest client that measures the box.
import { Agent, request } from 'node:http';
import { readFileSync } from 'node:fs';

const [port, localAddress, tokenCount, ms] = process.argv.slice(2);
const demo = JSON.parse(readFileSync(new URL('../../native-config/demo.json', import.meta.url), 'utf8')).tenants[0];
const venue = demo.venues[0].id;
const basic = `Basic ${Buffer.from(`${demo.clients[0].clientId}:${demo.clients[0].clientSecret}`).toString('base64')}`;
const agent = new Agent({ keepAlive: true, maxSockets: Number(tokenCount) });

function post(path, headers, text) {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: Number(port),
        localAddress,
        agent,
        method: 'POST',
        path,
        headers: { ...headers, 'content-length': Buffer.byteLength(text) },
      },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (out += c));
        res.on('end', () => {
          let body = {};
          try {
            body = JSON.parse(out);
          } catch {}
          resolve({ status: res.statusCode, body });
        });
      },
    );
    req.on('error', () => resolve({ status: 0, body: {} }));
    req.end(text);
  });
}

const command = (token, path, body) =>
  post(
    `/ordering-api/api/order/${path}`,
    { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    JSON.stringify(body),
  );

const tokens = [];
for (let i = 0; i < Number(tokenCount); i++) {
  const form = new URLSearchParams({ grant_type: 'password', username: 'anonymous', password: '' }).toString();
  const res = await post(
    '/auth-oauth2/oauth/token',
    { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': demo.id, authorization: basic },
    form,
  );
  if (res.status === 200) tokens.push(res.body.access_token);
}

const answers = {};
const count = (a) => {
  const key = a.status === 429 ? `429 ${a.body.codes?.[0]?.args?.[0]}` : String(a.status);
  answers[key] = (answers[key] ?? 0) + 1;
  return a;
};
const half = Array.from({ length: 200 }, () => ({ productId: 'zurek', quantity: 1 }));
const until = performance.now() + Number(ms);
await Promise.all(
  tokens.map(async (token) => {
    let order;
    let grown = false;
    for (let q = 1; performance.now() < until; q = 3 - q) {
      if (!order) {
        const made = count(await command(token, 'new', { orderType: 'TAKE_AWAY', buckets: [{ venue, lines: half }] }));
        if (made.status === 200) order = made.body;
      } else if (!grown) {
        grown = count(await command(token, `${order.orderId}/append`, { venue, lines: half })).status === 200;
      } else {
        count(await command(token, `${order.orderId}/update`, { venue, lines: [{ id: order.lines[0], quantity: q }] }));
      }
    }
  }),
);
agent.destroy();
console.log(JSON.stringify({ tokens: tokens.length, answers }));
