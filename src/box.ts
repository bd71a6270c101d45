import { accessSync, constants, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import cron from 'node-cron';
import type { Config } from './config.js';
import { openDatabase, startCheckpointer, type Db } from './db/open.js';
import { migrate } from './db/migrate.js';
import type { HttpRequest } from './http/types.js';
import type { Logger } from './log.js';
import { loadOrCreateKey } from './modules/auth/jwt.js';
import { createAuthRepo } from './modules/auth/repo.js';
import { authRoutes } from './modules/auth/routes.js';
import { createAuthService } from './modules/auth/service.js';
import { createMenuRepo } from './modules/menus/repo.js';
import { menuRoutes } from './modules/menus/routes.js';
import { createMenuService } from './modules/menus/service.js';
import { createCommandQueue } from './modules/ordering/command-queue.js';
import { createOrderRepo } from './modules/ordering/repo.js';
import { orderingRoutes } from './modules/ordering/routes.js';
import { createOrderingService } from './modules/ordering/service.js';
import { createProvisioningRepo } from './modules/provisioning/repo.js';
import { applyProvisioning } from './modules/provisioning/service.js';
import { createVenueRepo } from './modules/venues/repo.js';
import { venueRoutes } from './modules/venues/routes.js';
import { createServer } from './server.js';
import { createEventStore } from './ws/event-store.js';

export interface BoxOptions {
  config: Config;
  log: Logger;
  /** Provisioning documents applied at start, by name (the demo, a provisioning file). */
  provisioning: { name: string; document: unknown }[];
}

export interface Box {
  port: number;
  db: Db;
  stop(): Promise<void>;
}

export class StartError extends Error {}

/** Opens the data directory and database, provisions, starts the server and the scheduled jobs. */
export async function startBox({ config, log, provisioning }: BoxOptions): Promise<Box> {
  const dataDir = resolve(config.dataDir);
  prepareDataDir(dataDir);
  const db = openDatabase(join(dataDir, 'venue-box.db'));
  try {
    migrate(db);
    const provisioningRepo = createProvisioningRepo(db);
    for (const p of provisioning) {
      const result = applyProvisioning(provisioningRepo, p.name, p.document);
      log.info({ provisioning: p.name, result }, 'provisioning checked');
    }
    return await serve(db, dataDir, config, log);
  } catch (err) {
    db.close();
    throw err;
  }
}

async function serve(db: Db, dataDir: string, config: Config, log: Logger): Promise<Box> {
  const now = (): number => Date.now();
  const auth = createAuthService(createAuthRepo(db), loadOrCreateKey(dataDir), {
    accessTtlSeconds: config.auth.accessTokenTtlSeconds,
    refreshTtlMs: config.auth.refreshTokenTtlDays * 86_400_000,
    now,
  });
  const venues = createVenueRepo(db);
  const menus = createMenuService(createMenuRepo(db), venues);
  const events = createEventStore(db);
  const orderRepo = createOrderRepo(db);
  const ordering = createOrderingService({ repo: orderRepo, venues, menus, events, source: 'venue-box', now });

  let accepting = true;
  const authenticate = (req: HttpRequest) => {
    const header = req.headers.authorization ?? '';
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    return auth.verify(bearer ?? (header === '' ? (req.query.get('access_token') ?? undefined) : undefined));
  };
  const server = createServer(
    [...authRoutes(auth), ...venueRoutes(venues), ...menuRoutes(menus), ...orderingRoutes(ordering)],
    { log, events, authenticate, maxBodyBytes: config.http.maxBodyBytes, accepting: () => accepting },
  );
  const queue = createCommandQueue({ repo: orderRepo, handler: ordering.handler, push: server.hub.push, log, now });
  ordering.attachQueue(queue);
  // Commands confirmed before a crash or power cut are applied before the first new request.
  queue.drain();

  const stopCheckpointer = startCheckpointer(db);
  const jobs = [
    cron.schedule('17 * * * *', () => log.info({ removed: auth.sweepExpired() }, 'expired refresh tokens removed'), {
      name: 'refresh-token-sweep', noOverlap: true,
    }),
    cron.schedule('23 * * * *', () => {
      const removed = events.pruneBefore(now() - config.events.retentionHours * 3_600_000);
      log.info({ removed }, 'old socket events removed');
    }, { name: 'event-prune', noOverlap: true }),
  ];

  const port = await server.listen(config.host, config.port);
  log.info({ address: `http://${config.host}:${port}`, host: config.host, port, dataDir }, 'venue-box listening');

  return {
    port,
    db,
    async stop() {
      accepting = false;
      server.stopListening();
      for (const job of jobs) await job.destroy();
      stopCheckpointer();
      // Let confirmations already in this tick commit and their replies go out before closing.
      await new Promise((r) => setTimeout(r, 20));
      queue.drain();
      queue.stop();
      await new Promise((r) => setTimeout(r, 20));
      server.hub.closeAll(1001, 'venue-box is stopping');
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.close();
      log.info('venue-box stopped');
    },
  };
}

function prepareDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new StartError(`data directory ${dir} is not writable: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}
