// The PostgreSQL of bench-fleet's centrals, in a process of its own (`node fleet-pg.mjs DIR`): the embedded cluster
// the central runs (docs/sync.md "Running it"), so centrals can be killed and started again while the database
// stays up. Prints `{"url": ...}` once it accepts connections; SIGTERM stops the cluster, then the process.
import { mkdirSync } from 'node:fs';
import { FLEET_LIB } from './fleet-lib.mjs';

const { openEmbedded } = await import(FLEET_LIB);
mkdirSync(process.argv[2], { recursive: true });
const db = await openEmbedded(process.argv[2], 'serve');
console.log(JSON.stringify({ url: db.url }));
let stopping = false;
for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    db.stop().finally(() => process.exit(0));
  });
}
setInterval(() => undefined, 1 << 30);
