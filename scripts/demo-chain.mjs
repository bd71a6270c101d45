// Fills a running central with a week of the demo chain (README "Headquarters console"): three simulated boxes,
// one per demo venue, speaking the real sync protocol (scripts/lib/demo-chain.mjs). Run `npm run central` first.
//   node scripts/demo-chain.mjs [--central http://127.0.0.1:8090] [--data-dir central-data] [--days 7] [--seed 1]
import { parseArgs } from 'node:util';
import { fillDemoChain } from './lib/demo-chain.mjs';

const { values } = parseArgs({
  options: {
    central: { type: 'string', default: 'http://127.0.0.1:8090' },
    'data-dir': { type: 'string', default: 'central-data' },
    days: { type: 'string', default: '7' },
    seed: { type: 'string', default: '1' },
  },
});
const sent = await fillDemoChain({
  central: values.central,
  dataDir: values['data-dir'],
  days: Number(values.days),
  seed: Number(values.seed),
});
console.log(`demo chain: ${sent} events from 3 simulated boxes at ${values.central}`);
