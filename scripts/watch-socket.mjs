// Prints every frame the box pushes to a user's socket: node scripts/watch-socket.mjs TOKEN [SINCE] [BASE]
// BASE defaults to ws://127.0.0.1:8080. Stops on Ctrl-C or when the box closes the socket (4001 at token expiry).
import WebSocket from 'ws';

const [token, since, base = 'ws://127.0.0.1:8080'] = process.argv.slice(2);
if (!token) {
  console.error('usage: node scripts/watch-socket.mjs ACCESS_TOKEN [SINCE] [ws://HOST:PORT]');
  process.exit(64);
}
const query = since ? `?since=${encodeURIComponent(since)}` : '';
const ws = new WebSocket(`${base}/ordering-api/ws${query}`, { headers: { authorization: `Bearer ${token}` } });
ws.on('unexpected-response', (_req, res) => {
  console.error(`upgrade refused: HTTP ${res.statusCode}`);
  process.exit(1);
});
ws.on('error', (err) => {
  console.error(`socket error: ${err.message}`);
  process.exit(1);
});
ws.on('message', (data) => console.log(JSON.stringify(JSON.parse(String(data)), null, 2)));
ws.on('close', (code, reason) => {
  console.error(`closed: ${code} ${String(reason)}`);
  process.exit(0);
});
