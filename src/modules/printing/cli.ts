import { existsSync, readdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { SerialPort } from 'serialport';
import { connect } from 'node:net';
import { type PrinterConfig, printerAddress, printerLocation } from './printers.js';
import { openPrinterDevice } from './printer-device.js';
import { PrinterError } from './printer-status.js';
import { TcpPrinter } from './tcp-printer.js';
import { encodeTestPage } from './tickets.js';
import { ProcessError } from '../../shared/errors.js';

interface Output {
  out(text: string): void;
  err(text: string): void;
}

interface PortInfo {
  path: string;
  manufacturer?: string;
  serialNumber?: string;
  vendorId?: string;
  productId?: string;
}

/** How long `printers list` waits for a network printer to accept a connection. */
const ANSWER_TIMEOUT_MS = 1000;

/**
 * `venue-box printers list`: the machine's serial ports (SerialPort.list(), which asks `udevadm`), then the
 * configured printers and whether their paths exist (a network printer: whether it accepts a TCP connection). Without udevadm (a container, a minimal image) the
 * ports come from a look at /dev instead, with a note saying so: never a stack trace.
 */
export async function listPrinters(printers: PrinterConfig[], io: Output): Promise<number> {
  let ports: PortInfo[];
  try {
    ports = await SerialPort.list();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    io.err(
      code === 'ENOENT'
        ? 'venue-box: udevadm is not installed (it comes with udev/systemd), so ports have no USB details; listing /dev instead\n'
        : `venue-box: listing serial ports failed (${(err as Error).message}); listing /dev instead\n`,
    );
    ports = devicesInDev().map((path) => ({ path }));
  }
  io.out(ports.length === 0 ? 'serial ports: none found\n' : 'serial ports:\n');
  for (const p of ports) {
    const usb = p.vendorId ? ` usb ${p.vendorId}:${p.productId ?? '????'}` : '';
    const details = [p.manufacturer, p.serialNumber && `serial ${p.serialNumber}`].filter(Boolean).join(', ');
    io.out(`  ${p.path}${usb}${details ? ` (${details})` : ''}\n`);
  }
  io.out(
    printers.length === 0
      ? 'configured printers: none (add "printers" to the config file, --config FILE)\n'
      : 'configured printers:\n',
  );
  const states = await Promise.all(printers.map(stateOf));
  printers.forEach((p, i) => {
    const line = printerAddress(p).kind === 'serial' ? `${p.baudRate} baud, ` : '';
    io.out(
      `  ${p.name}  ${p.role}  venue ${p.venue}  ${printerLocation(p)} (${states[i]})  ${line}${p.columns} columns, ${p.codePage}\n`,
    );
  });
  return 0;
}

/** A serial printer: present (and where its link points) or MISSING; a network printer: answers or NOT ANSWERING. */
async function stateOf(p: PrinterConfig): Promise<string> {
  const a = printerAddress(p);
  if (a.kind === 'serial') return existsSync(a.path) ? `present${realOf(a.path)}` : 'MISSING';
  const reason = await new Promise<string | undefined>((resolve) => {
    const socket = connect({ host: a.host, port: a.port });
    const done = (why: string | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(why);
    };
    const timer = setTimeout(() => done(`no answer in ${ANSWER_TIMEOUT_MS} ms`), ANSWER_TIMEOUT_MS);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
  });
  return reason === undefined ? 'answers' : `NOT ANSWERING: ${reason}`;
}

/** Serial devices by name, for machines without udevadm: USB adapters, the Pi's UARTs, udev's stable names. */
function devicesInDev(): string[] {
  const found: string[] = [];
  const scan = (dir: string, match: RegExp) => {
    try {
      for (const name of readdirSync(dir).sort()) if (match.test(name)) found.push(join(dir, name));
    } catch {
      // the directory is not there: nothing of that kind
    }
  };
  scan('/dev', /^(ttyUSB\d+|ttyACM\d+|ttyAMA\d+|receipt-.+)$/);
  scan('/dev/serial/by-id', /./);
  return found;
}

function realOf(path: string): string {
  try {
    const real = realpathSync(path);
    return real === path ? '' : `, -> ${real}`;
  } catch {
    return '';
  }
}

/**
 * `venue-box printers test NAME`: asks the paper status (when the printer answers DLE EOT 4), prints the test
 * page (the code page's Polish letters) and waits for the drain. Exit 0, or a ProcessError 'refused' (exit 1) naming the cause.
 */
export async function printTestPage(
  printers: PrinterConfig[],
  name: string,
  timeoutMs: number,
  io: Output,
): Promise<number> {
  const printer = printers.find((p) => p.name === name);
  if (!printer) {
    throw new ProcessError(
      'refused',
      printers.length === 0
        ? `no printer named ${name}: no printers are configured (pass the config file with --config FILE)`
        : `no printer named ${name} in the configuration (configured: ${printers.map((p) => p.name).join(', ')})`,
    );
  }
  const device = openPrinterDevice(printer, timeoutMs);
  const where = printerLocation(printer);
  try {
    if (printer.statusQuery) {
      const paper = await device.paperStatus();
      if (paper === 'out') throw new ProcessError('refused', `${name} (${where}) is out of paper`);
      if (paper === 'nearEnd') io.err(`venue-box: ${name}: paper near end\n`);
    }
    const bytes = encodeTestPage(printer.name, printer, Date.now());
    await device.print(bytes);
    io.out(`test page printed on ${name} (${where}, ${printer.codePage}, ${bytes.length} bytes)\n`);
    return 0;
  } catch (err) {
    if (!(err instanceof PrinterError)) throw err;
    const hint =
      err.reason === 'missing'
        ? device instanceof TcpPrinter
          ? ' (is it on and on the network, are host and port right - see `venue-box printers list`?)'
          : ' (is it plugged in, is the path right - see `venue-box printers list` - and is no running venue-box holding the port?)'
        : err.reason === 'offline'
          ? ' (is it on? if it never answers DLE EOT 4, set "statusQuery": false for it)'
          : '';
    throw new ProcessError('refused', `${name}: ${err.message}${hint}`);
  } finally {
    device.close();
  }
}
