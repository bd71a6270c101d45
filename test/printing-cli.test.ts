import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type FakePrinter, STATUS_OK, STATUS_PAPER_OUT, startFakePrinter, ticketText } from './support/fake-printer.js';
import { runCliAsync } from './support/cli.js';
import { VENUE } from './support/printing.js';
import { skipWithout } from './support/system-packages.js';

// A receipt printer on a serial line is a socat pseudo-terminal pair (test/support/fake-printer.ts).
const skip = skipWithout(import.meta.url, 'socat');

let dir: string;
let printer: FakePrinter;
let configFile: string;

// Without blocking this process: the fake printer must answer meanwhile.
const cli = (...args: string[]) => runCliAsync(args, 15_000);

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vb-print-cli-'));
  printer = await startFakePrinter(dir, 'bar');
  configFile = join(dir, 'venue-box.jsonc');
  writeFileSync(
    configFile,
    `// printers for the CLI test
{
  "printers": [
    { "name": "bar", "venue": "${VENUE}", "role": "kitchen", "path": "${printer.boxPath}" },
    { "name": "gone", "venue": "${VENUE}", "role": "counter", "path": "${join(dir, 'nothing-here')}" },
  ],
  "printing": { "statusTimeoutMs": 300 },
}
`,
  );
});
afterAll(async () => {
  await printer?.stop();
});

describe.skipIf(skip)('venue-box printers', () => {
  test('list: the serial ports, and each configured printer with its path present or missing; never a crash without udevadm', async () => {
    const { code, stdout, stderr } = await cli('printers', 'list', '--config', configFile);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^serial ports/m);
    expect(stdout).toMatch(
      new RegExp(`bar\\s+kitchen\\s+venue ${VENUE}\\s+${printer.boxPath} \\(present, -> /dev/pts/\\d+\\)`),
    );
    expect(stdout).toMatch(/gone\s+counter.*\(MISSING\)/);
    expect(stderr).not.toMatch(/\n\s+at /); // no stack trace, whatever the machine
    if (stderr !== '') expect(stderr).toMatch(/udevadm is not installed|listing serial ports failed/);
  });

  test('test NAME: prints the test page with the Polish letters in cp852 and a cut, exit 0', async () => {
    const before = printer.tickets().length;
    const { code, stdout } = await cli('printers', 'test', 'bar', '--config', configFile);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^test page printed on bar \(.*, cp852, \d+ bytes\)$/m);
    const [page] = (await printer.waitForTickets(before + 1)).slice(before);
    expect(ticketText(page!)).toContain('ĄĆĘŁŃÓŚŹŻ ąćęłńóśźż');
    expect(ticketText(page!)).toContain('Żurek, Gęś, Łódź');
    expect(page!.includes(Buffer.from([0x1d, 0x56]))).toBe(true);
  });

  test('test NAME fails with one clear line and exit 1: unknown name, missing port, paper out', async () => {
    const unknown = await cli('printers', 'test', 'grill', '--config', configFile);
    expect(unknown).toMatchObject({
      code: 1,
      stderr: 'venue-box: no printer named grill in the configuration (configured: bar, gone)\n',
    });
    const missing = await cli('printers', 'test', 'gone', '--config', configFile);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^venue-box: gone: cannot open .*nothing-here.*is it plugged in/);
    printer.status = STATUS_PAPER_OUT;
    try {
      const out = await cli('printers', 'test', 'bar', '--config', configFile);
      expect(out).toMatchObject({ code: 1, stderr: `venue-box: bar (${printer.boxPath}) is out of paper\n` });
    } finally {
      printer.status = STATUS_OK;
    }
    const usage = await cli('printers', 'test');
    expect(usage.code).toBe(64);
  });
});
