import type { Config } from './config.js';
import type { Db } from './db/open.js';
import type { Logger } from './log.js';
import { createBoxMetrics } from './modules/health/metrics.js';
import { type createSystemdNotifier, systemdService } from './modules/health/watchdog.js';
import { COMMAND_KINDS } from './modules/ordering/service.js';
import { resolveScreensBootstrap } from './modules/screens/routes.js';
import { nowMs } from './shared/clock.js';
import { createRuntime, type ServiceFailure, serviceOf } from './shared/runtime.js';
import { createBackground } from './box/background.js';
import { applyProvisioningDocuments, createBoxAuth, createDomain, createRepos } from './box/domain.js';
import { createBoxCheckpointer, openStorage } from './box/storage.js';
import { standbyService } from './box/standby.js';
import type { InstallPlan } from './modules/update/agent.js';
import { createUpdateRepo } from './modules/update/repo.js';
import { createHttp, createSockets } from './box/transport.js';
import pkg from '../package.json';

export interface BoxOptions {
  config: Config;
  log: Logger;
  /** Provisioning documents applied at start, by name (the demo, a provisioning file). */
  provisioning: { name: string; document: unknown }[];
  /** The --config file, read again by the scheduled backup (src/modules/backup/service.ts). */
  configFile?: string;
  /** systemd's Type=notify and WatchdogSec (native-config/venue-box.service): READY=1 once serving. */
  systemd?: ReturnType<typeof createSystemdNotifier>;
  /**
   * A release under its health gate (src/modules/update/trial.ts): everything but the printers, the loops to the
   * central, the scheduled jobs and the updates, which are the old release's until the new one is confirmed.
   */
  trial?: boolean;
  /** This box has just taken over from its dead primary (docs/operations.md "A standby box"). */
  tookOver?: boolean;
}

export interface Box {
  port: number;
  db: Db;
  stop(): Promise<void>;
  /** Resolves if a service whose policy is 'fatal' fails: the caller stops the box and exits non-zero. */
  failed: Promise<ServiceFailure>;
  /** Resolves when an update is to be installed: the caller stops the box and runs the install. */
  installRequested: Promise<InstallPlan>;
  /** The health gate's self-check (the database's quick_check, the printers' queue): a reason, or undefined. */
  selfCheck(): string | undefined;
}

/**
 * The box's composition root (docs/architecture.md "Wiring and lifecycle"): each layer is made from the ones
 * above it, then the runtime runs every service in the order listed and stops them in the reverse order.
 */
export async function startBox({
  config,
  log,
  provisioning,
  configFile,
  systemd,
  trial,
  tookOver,
}: BoxOptions): Promise<Box> {
  const now = nowMs;
  const metrics = config.metrics.enabled
    ? createBoxMetrics({ version: pkg.version, commandKinds: COMMAND_KINDS })
    : undefined;
  let reportFailure!: (failure: ServiceFailure) => void;
  const failed = new Promise<ServiceFailure>((resolve) => (reportFailure = resolve));
  const runtime = createRuntime({ log, onFatal: reportFailure, onRestart: metrics?.onServiceRestart });

  const storage = openStorage(config, log, metrics);
  const { db, dataDir, disk } = storage;
  try {
    applyProvisioningDocuments(db, provisioning, log);
    const repos = createRepos(db, dataDir);
    const auth = createBoxAuth(db, dataDir, config, storage.durable, now);
    const sockets = createSockets({ config, log, repos, auth, walSync: storage.walSync, metrics });
    // The stream a standby box follows this one on (docs/operations.md "A standby box").
    storage.standby.mountStream(sockets.app);
    const domain = createDomain({
      config,
      log,
      db,
      repos,
      publisher: sockets.publisher,
      durable: storage.durable,
      metrics,
      now,
      tookOver,
    });
    const http = createHttp({
      config,
      log,
      db,
      dataDir,
      repos,
      auth,
      domain,
      sockets,
      disk,
      metrics,
      standby: storage.standby,
      now,
      failedService: runtime.failure,
      screens: resolveScreensBootstrap(config.screens, provisioning),
    });
    const background = createBackground({
      config,
      log,
      db,
      dataDir,
      configFile,
      repos,
      auth,
      domain,
      publisher: sockets.publisher,
      disk,
      metrics,
      now,
      synced: storage.durable.synced,
    });
    const checkpointer = createBoxCheckpointer(storage, log, metrics, domain.queue);

    // Started in this order, stopped in the reverse one (docs/operations.md "Command line": what SIGTERM does). The
    // queue applies the commands confirmed before a crash or power cut before the printers start (and its last
    // commands at shutdown before they stop: the spooler's drain); the port opens last, and closes first.
    await runtime.start([
      { name: 'metrics', service: serviceOf({ stop: () => metrics?.close() }), policy: 'fatal' },
      { name: 'storage', service: storage.service, policy: 'fatal' },
      // First of all: a box whose peer took over while it was away becomes its standby instead, before it prints,
      // sends to the central or opens its port.
      { name: 'standby', ...standbyService(storage.standby, tookOver === true), policy: 'fatal' },
      { name: 'sockets', service: sockets.service, policy: 'fatal' },
      { name: 'command queue', service: domain.queueService, policy: 'fatal' },
      // Not under trial: a release that may yet be rolled back (and its database restored) prints nothing.
      ...(trial ? [] : [{ name: 'spooler', service: domain.spoolerService, policy: 'fatal' as const }]),
      ...(trial
        ? []
        : [
            { name: 'sync sender', service: background.sender, policy: 'restart' as const },
            { name: 'catalogue puller', service: background.puller, policy: 'restart' as const },
            { name: 'menu images', service: background.mediaFetcher, policy: 'restart' as const },
          ]),
      { name: 'checkpointer', service: checkpointer, policy: 'fatal' },
      ...(trial
        ? []
        : [
            { name: 'jobs', service: background.jobs, policy: 'fatal' as const },
            // Before the port opens: a release just installed confirms itself here, before it takes a command.
            { name: 'updates', service: background.updates.service, policy: 'restart' as const },
          ]),
      { name: 'http', service: http.service, policy: 'fatal', ready: http.listening },
      ...(systemd
        ? [
            {
              name: 'systemd',
              service: systemdService(systemd, () => `serving on ${config.host}:${http.port()}`),
              policy: 'fatal' as const,
            },
          ]
        : []),
    ]);
    return {
      port: http.port(),
      db,
      failed,
      installRequested: background.updates.installRequested,
      selfCheck: () => createUpdateRepo(db).selfCheck(),
      async stop() {
        await runtime.stop();
        log.info('venue-box stopped');
      },
    };
  } catch (err) {
    await runtime.stop();
    await storage.close();
    metrics?.close();
    throw err;
  }
}
