// A network kitchen printer for test/standby-netns.test.ts, run inside the client's network namespace: raw TCP on
// port 9100 as Ethernet receipt printers speak it. It answers the status query DLE EOT 4 with "paper present"
// (0x12) and appends every other byte to the file named, which the test reads.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:net';

const [file, host] = process.argv.slice(2);
createServer((socket) => {
  socket.on('error', () => undefined);
  let carry = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    const bytes = Buffer.concat([carry, chunk]);
    carry = Buffer.alloc(0);
    const kept = [];
    for (let i = 0; i < bytes.length; i++) {
      if (bytes[i] !== 0x10) {
        kept.push(bytes[i]);
        continue;
      }
      // A DLE whose next two bytes have not come yet: decide with the next chunk.
      if (i + 2 >= bytes.length) {
        carry = bytes.subarray(i);
        break;
      }
      if (bytes[i + 1] === 0x04 && bytes[i + 2] === 4) {
        socket.write(Buffer.from([0x12]));
        i += 2;
        continue;
      }
      kept.push(bytes[i]);
    }
    if (kept.length) appendFileSync(file, Buffer.from(kept));
  });
}).listen(9100, host);
