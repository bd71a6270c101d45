import type { WalSync } from '../../db/wal-sync.js';
import type { OutgoingFrame } from './event-store.js';

/** Where committed frames go: the socket hub (src/ws/hub.ts). */
export interface FrameWire {
  hold(frames: OutgoingFrame[]): void;
  push(frames: OutgoingFrame[]): void;
}

/**
 * Pushes committed frames in commit order, each once the commit that made it is on the disk
 * (docs/architecture.md "Durability and speed"). A stream's numbers then reach its sockets in order, whichever
 * writer made them.
 */
export interface Publisher {
  /** Frames of a transaction that was durable when it committed (synchronous=FULL): sent behind any still held. */
  publish(frames: OutgoingFrame[]): void;
  /**
   * Frames of a transaction committed without its own fsync (src/db/wal-sync.ts): held, then sent once an fsync
   * of the WAL covers it, right before `then` (which answers the requests that made them).
   */
  publishAfterSync(frames: OutgoingFrame[], then: (err?: Error) => void): void;
}

export function createPublisher(sync: WalSync, wire: FrameWire): Publisher {
  function publishAfterSync(frames: OutgoingFrame[], then: (err?: Error) => void): void {
    wire.hold(frames);
    sync.afterSync((err) => {
      // After a failed fsync nothing is told (the box stops: src/db/wal-sync.ts); `then` answers with the error.
      if (!err) wire.push(frames);
      then(err);
    });
  }
  return {
    publish(frames) {
      // Durable already: only frames still held before it make it wait.
      if (sync.idle()) wire.push(frames);
      else publishAfterSync(frames, () => undefined);
    },
    publishAfterSync,
  };
}
