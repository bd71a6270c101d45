/**
 * The shape of every long-running part of the box (the command queue, the spooler, the checkpointer, the socket
 * hub, the sync sender, the catalogue puller, the scheduled jobs, the systemd notifier): started once, then at
 * shutdown drained (take nothing new, finish what was accepted) and stopped (timers, workers and ports released),
 * so that src/box.ts starts them and stops them as lists, in order (docs/printing.md "Command line": what SIGTERM does).
 */
export interface Service {
  start(): void | Promise<void>;
  /** Finishes what was accepted; absent for parts that have nothing to finish. */
  drain?(): void | Promise<void>;
  stop(): void | Promise<void>;
}

export interface NamedService {
  name: string;
  service: Service;
}

/** Drains and stops each part in turn, in the order given. */
export async function stopInOrder(parts: readonly NamedService[]): Promise<void> {
  for (const { service } of parts) {
    await service.drain?.();
    await service.stop();
  }
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
