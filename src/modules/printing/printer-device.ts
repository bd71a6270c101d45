import { type PrinterConfig, printerAddress } from './printers.js';
import { SerialPrinter } from './serial-printer.js';
import { TcpPrinter } from './tcp-printer.js';

/**
 * The device of a configured printer: a SerialPrinter on its path, or a TcpPrinter on its host and port. Both
 * keep the PrinterDevice contract (printer-worker.ts), so the spooler, its retries and backups, and the CLI
 * treat them alike.
 */
export function openPrinterDevice(p: PrinterConfig, timeoutMs: number): SerialPrinter | TcpPrinter {
  const address = printerAddress(p);
  const { statusQuery } = p;
  return address.kind === 'serial'
    ? new SerialPrinter({ path: address.path, baudRate: p.baudRate, statusQuery, timeoutMs })
    : new TcpPrinter({ host: address.host, port: address.port, statusQuery, timeoutMs });
}
