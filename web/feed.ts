import type { Session } from './api.js';
import { LiveSocket } from './live.js';
import type { Frame, Notification, Order } from './model.js';
import { Store } from './store.js';

export interface PrinterStatusFrame {
  printer: string;
  status: string;
  queueDepth: number;
}

/**
 * One venue as staff screens see it: its open orders (NEW, ORDERED, READY), from the staff list over HTTP and
 * then the staff venue socket (`?venue=`, docs/orders.md "Staff views"); printer status and menu changes from
 * the same socket; the NOTIFICATIONs of this user's commands.
 */
export class VenueFeed {
  readonly orders = new Store<Map<string, Order>>(new Map());
  /** Bumped on each PRINTER_STATUS frame: the manager screen reads the printers again. */
  readonly printerEvents = new Store<PrinterStatusFrame | null>(null);
  readonly menuEvents = new Store(0);
  /** Orders that just went to the kitchen (new, or a new round of a tab): the kitchen display beeps. */
  readonly announced = new Store<{ orderId: string; at: number } | null>(null);
  readonly notifications = new Store<Notification | null>(null);
  /** The last orders that closed (COMPLETED or CANCELLED), newest last: pick-up confirms a hand-over from them. */
  readonly closed = new Store<Order[]>([]);
  readonly socket: LiveSocket;
  private duringResync: Order[] | null = null;

  constructor(
    private readonly session: Session,
    readonly venue: string,
  ) {
    this.socket = new LiveSocket({
      session,
      query: `venue=${encodeURIComponent(venue)}`,
      onFrame: (frame) => this.onFrame(frame),
      resync: () => this.resync(),
    });
  }

  start(): void {
    this.socket.start();
  }

  stop(): void {
    this.socket.stop();
  }

  private onFrame(frame: Frame): void {
    if (frame.type === 'ORDER_CHANGE') {
      const order = frame.payload as Order;
      this.duringResync?.push(order);
      this.apply(order, true);
    } else if (frame.type === 'PRINTER_STATUS') {
      this.printerEvents.set(frame.payload as PrinterStatusFrame);
    } else if (frame.type === 'MENU_CHANGED') {
      this.menuEvents.update((n) => n + 1);
    } else if (frame.type === 'NOTIFICATION') {
      this.notifications.set(frame.payload as Notification);
    }
    // Other frame types are ignored, as docs/api.md "The socket" asks of every client.
  }

  private apply(order: Order, live: boolean): void {
    const map = new Map(this.orders.value);
    const before = map.get(order.id);
    if (before && before.lastChanged > order.lastChanged) return; // an older copy
    if (order.closed) map.delete(order.id);
    else map.set(order.id, order);
    this.orders.set(map);
    if (order.closed) this.closed.update((list) => [...list.filter((o) => o.id !== order.id).slice(-19), order]);
    if (live && order.status === 'ORDERED' && orderedLines(order) > (before ? orderedLines(before) : 0)) {
      this.announced.set({ orderId: order.id, at: Date.now() });
    }
  }

  /** Every open order of the venue over HTTP, then whatever live frames brought meanwhile on top. */
  async resync(): Promise<void> {
    this.duringResync = [];
    try {
      const fetched = new Map<string, Order>();
      let cursor: string | null = null;
      for (let page = 0; page < 20; page++) {
        const query: string = `venue=${encodeURIComponent(this.venue)}&status=NEW,ORDERED,READY&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const answer: { items: Order[]; next: string | null } = await this.session.call(
          'GET',
          `/ordering-api/api/orders?${query}`,
        );
        for (const order of answer.items) fetched.set(order.id, order);
        cursor = answer.next;
        if (!cursor) break;
      }
      const live = this.duringResync;
      this.orders.set(fetched);
      for (const order of live) this.apply(order, false);
    } finally {
      this.duringResync = null;
    }
  }

  /** Puts an order the screen read itself (GET order/{id}) in the list, unless a newer copy is there. */
  note(order: Order): void {
    this.apply(order, false);
  }
}

const orderedLines = (order: Order): number =>
  order.buckets.reduce((n, b) => n + b.lines.filter((l) => l.status === 'ORDERED').length, 0);
