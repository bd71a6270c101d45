import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { SerialPort } from 'serialport';

export const STATUS_OK = 0x12;
export const STATUS_PAPER_OUT = 0x72;

const SOCAT = existsSync('/usr/bin/socat') ? '/usr/bin/socat' : 'socat';
const ESC_AT = Buffer.from([0x1b, 0x40]);
const DLE = 0x10;
const EOT = 0x04;

/**
 * A receipt printer's paper and its answers, whatever the line: it answers `DLE EOT 4` with `status` (0x12
 * paper ok, 0x72 paper out; null: no answer, a printer that is on the line but not responding) and keeps every
 * other byte, across unplug and plug-in, like a paper roll.
 */
export interface FakePaper {
  status: number | null;
  /** DLE EOT 4 queries answered or not. */
  statusQueries: number;
  /** Every byte received except the status queries. */
  received(): Buffer;
  /** The received bytes cut into tickets, each starting with ESC @. */
  tickets(): Buffer[];
  waitForTickets(count: number, timeoutMs?: number): Promise<Buffer[]>;
  /** Waits for a complete ticket whose text contains `text` (ticketText); returns the first such ticket. */
  waitForTicketWith(text: string, timeoutMs?: number): Promise<Buffer>;
  /** Waits until `count` status queries have been seen in total. */
  waitForQueries(count: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A receipt printer on a real serial line: a socat pseudo-terminal pair, the box writing to one end
 * (`boxPath`) and this fake reading the other.
 */
export interface FakePrinter extends FakePaper {
  readonly boxPath: string;
  /** Kills socat: the line is gone (a printer unplugged); both links disappear. */
  unplug(): Promise<void>;
  /** A new socat on the same link paths, and the printer end opened again. */
  plugIn(): Promise<void>;
}

/**
 * A network receipt printer: a node:net server on 127.0.0.1 speaking raw TCP like port 9100 (JetDirect), the
 * status answer going back on the connection that asked.
 */
export interface FakeTcpPrinter extends FakePaper {
  readonly host: string;
  readonly port: number;
  /** Connections accepted so far. */
  connections: number;
  /** Close each connection once this many more ticket bytes came in (a printer failing mid-job); null: never. */
  closeAfterBytes: number | null;
  /** Close the connection after each complete ticket (printers that take one job a connection). */
  closeAfterTicket: boolean;
  /** Switched off: the port is closed and every connection reset; connecting is refused. */
  switchOff(): Promise<void>;
  /** Switched on again, listening on the same port. */
  switchOn(): Promise<void>;
}

/** The paper and the DLE EOT 4 parsing shared by the serial and the TCP fake. */
function createPaper(name: string) {
  let paper = Buffer.alloc(0);
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };

  /** A parser for one line or connection: `reply` sends the status back on it. */
  function parser(reply: (byte: Buffer) => void): (chunk: Buffer) => number {
    let carry: number[] = []; // a DLE or DLE EOT at the end of a chunk, waiting for the next byte
    return (chunk) => {
      const bytes = [...carry, ...chunk];
      carry = [];
      const out: number[] = [];
      for (let i = 0; i < bytes.length; i++) {
        if (bytes[i] === DLE) {
          const next = bytes.slice(i + 1, i + 3);
          if (next.length < 2 && next.every((b, k) => b === [EOT, 4][k])) {
            carry = bytes.slice(i); // maybe a query cut in two: decide with the next chunk
            break;
          }
          if (next[0] === EOT && next[1] === 4) {
            printer.statusQueries++;
            if (printer.status !== null) reply(Buffer.from([printer.status]));
            i += 2;
            continue;
          }
        }
        out.push(bytes[i]!);
      }
      keep(Buffer.from(out));
      return out.length;
    };
  }

  function keep(bytes: Buffer): void {
    paper = Buffer.concat([paper, bytes]);
    notify();
  }

  function waitFor(done: () => boolean, what: () => string, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${name}: ${what()}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }

  const printer: Omit<FakePaper, 'stop'> = {
    status: STATUS_OK,
    statusQueries: 0,
    received: () => paper,
    tickets: () => splitTickets(paper),
    async waitForTickets(count, timeoutMs = 10_000) {
      await waitFor(
        () => completeTickets(paper) >= count,
        () => `expected ${count} tickets, got ${completeTickets(paper)}`,
        timeoutMs,
      );
      return splitTickets(paper);
    },
    async waitForTicketWith(text, timeoutMs = 10_000) {
      const find = () => splitTickets(paper).find((t) => hasCut(t) && ticketText(t).includes(text));
      await waitFor(
        () => find() !== undefined,
        () => `no ticket with ${text}`,
        timeoutMs,
      );
      return find()!;
    },
    waitForQueries: (count, timeoutMs = 10_000) =>
      waitFor(
        () => printer.statusQueries >= count,
        () => `expected ${count} status queries, got ${printer.statusQueries}`,
        timeoutMs,
      ),
  };
  return { printer, parser };
}

export async function startFakePrinter(
  dir: string,
  name: string,
  options: { plugged?: boolean } = {},
): Promise<FakePrinter> {
  const printerPath = join(dir, `${name}-printer`);
  const boxPath = join(dir, `${name}-box`);
  let socat: ChildProcess | undefined;
  let port: SerialPort | undefined;
  const { printer: paper, parser } = createPaper(name);
  const onData = parser((byte) => port?.write(byte));

  async function plugIn(): Promise<void> {
    const proc = spawn(SOCAT, ['-d', '-d', `pty,raw,echo=0,link=${printerPath}`, `pty,raw,echo=0,link=${boxPath}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    socat = proc;
    await new Promise<void>((resolve, reject) => {
      let log = '';
      const timer = setTimeout(() => reject(new Error(`socat did not start: ${log}`)), 5000);
      proc.stderr!.on('data', (d: Buffer) => {
        log += String(d);
        if (log.includes('starting data transfer loop')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code) => reject(new Error(`socat exited with ${code}: ${log}`)));
    });
    const p = new SerialPort({ path: printerPath, baudRate: 19200, autoOpen: false });
    await new Promise<void>((resolve, reject) => p.open((err) => (err ? reject(err) : resolve())));
    p.on('data', onData);
    p.on('error', () => undefined); // the line going away is expected here
    port = p;
  }

  async function unplug(): Promise<void> {
    const proc = socat;
    socat = undefined;
    port = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGTERM');
    await exited;
  }

  // One object: `status` set by a test is the one the parser answers with.
  const printer: FakePrinter = Object.assign(paper, { boxPath, unplug, plugIn, stop: unplug });
  if (options.plugged !== false) await plugIn();
  return printer;
}

/** A network printer on 127.0.0.1, on `port` or a free one. */
export async function startFakeTcpPrinter(name: string, port = 0): Promise<FakeTcpPrinter> {
  const { printer: paper, parser } = createPaper(name);
  const sockets = new Set<Socket>();
  let server: Server | undefined;

  const printer: FakeTcpPrinter = Object.assign(paper, {
    host: '127.0.0.1',
    port,
    connections: 0,
    closeAfterBytes: null as number | null,
    closeAfterTicket: false,
    switchOff,
    switchOn,
    stop: switchOff,
  });

  function accept(socket: Socket): void {
    printer.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined); // the box resetting the connection is expected here
    let budget: number | null = null; // counted from the first bytes after closeAfterBytes was set
    const onData = parser((byte) => socket.write(byte));
    socket.on('data', (chunk: Buffer) => {
      budget = printer.closeAfterBytes === null ? null : (budget ?? printer.closeAfterBytes);
      const cutsBefore = completeTickets(paper.received());
      if (budget !== null && chunk.length >= budget) {
        onData(chunk.subarray(0, budget)); // the rest never reaches the paper
        socket.resetAndDestroy();
        return;
      }
      const kept = onData(chunk);
      if (budget !== null) budget -= kept;
      if (printer.closeAfterTicket && completeTickets(paper.received()) > cutsBefore) socket.end();
    });
  }

  async function switchOn(): Promise<void> {
    const s = createServer(accept);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(printer.port, printer.host, () => resolve());
    });
    server = s;
    (printer as { port: number }).port = (s.address() as AddressInfo).port; // the same port at each switch-on
  }

  async function switchOff(): Promise<void> {
    const s = server;
    server = undefined;
    for (const socket of sockets) socket.resetAndDestroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  await switchOn();
  return printer;
}

/** Tickets in a byte stream: each begins with ESC @ (initialize). */
export function splitTickets(bytes: Buffer): Buffer[] {
  const starts: number[] = [];
  for (let i = bytes.indexOf(ESC_AT); i >= 0; i = bytes.indexOf(ESC_AT, i + 2)) starts.push(i);
  return starts.map((s, k) => bytes.subarray(s, starts[k + 1] ?? bytes.length));
}

/** Tickets received up to their cut (GS V). */
function completeTickets(bytes: Buffer): number {
  return splitTickets(bytes).filter(hasCut).length;
}

export const hasCut = (ticket: Buffer): boolean => ticket.includes(Buffer.from([0x1d, 0x56]));

const CP852: Record<number, string> = {
  0xa4: 'Ą',
  0x8f: 'Ć',
  0xa8: 'Ę',
  0x9d: 'Ł',
  0xe3: 'Ń',
  0xe0: 'Ó',
  0x97: 'Ś',
  0x8d: 'Ź',
  0xbd: 'Ż',
  0xa5: 'ą',
  0x86: 'ć',
  0xa9: 'ę',
  0x88: 'ł',
  0xe4: 'ń',
  0xa2: 'ó',
  0x98: 'ś',
  0xab: 'ź',
  0xbe: 'ż',
};

/** The printable text of a cp852 ticket; every control byte becomes `|`, so command bytes never join words. */
export function ticketText(ticket: Buffer): string {
  let text = '';
  for (const b of ticket) text += b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : (CP852[b] ?? '|');
  return text;
}
