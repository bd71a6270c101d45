import { spawn } from 'node:child_process';
import { type Service, serviceOf } from '../../shared/runtime.js';
import type { Logger } from '../../log.js';

/**
 * systemd's readiness and watchdog protocol (sd_notify) for Type=notify and WatchdogSec= in venue-box.service.
 *
 * The messages are datagrams on the unix socket named by NOTIFY_SOCKET, and Node cannot send those (`net` is
 * stream-only, `dgram` is UDP only). Each message is therefore sent by systemd's own `systemd-notify`, spawned
 * from the event loop: a loop that is stuck spawns nothing, systemd misses WATCHDOG=1 and restarts the box. The
 * unit needs NotifyAccess=all (the sender is a child, not the main process). A message from a child that has
 * already exited could not be matched to the unit; since systemd 246 `systemd-notify` waits (BARRIER=1) until the
 * manager has read it, so on Debian 12 (systemd 252) no message is lost to that race.
 * docs/operations.md "Health: metrics, readiness and the watchdog".
 */

/** Half the watchdog interval systemd set for this process (sd_watchdog_enabled), in ms; undefined: no watchdog. */
export function watchdogPingMs(env: NodeJS.ProcessEnv, pid: number): number | undefined {
  const usec = env.WATCHDOG_USEC;
  if (usec === undefined || !/^\d{1,15}$/.test(usec) || Number(usec) === 0) return undefined;
  // WATCHDOG_PID names the process the watchdog is for; a child that inherited the variables is not it.
  if (env.WATCHDOG_PID !== undefined && env.WATCHDOG_PID !== String(pid)) return undefined;
  return Math.max(1, Math.floor(Number(usec) / 2000));
}

export interface NotifierDeps {
  env: NodeJS.ProcessEnv;
  pid: number;
  log: Logger;
  /** The program that sends one message; `systemd-notify` (from PATH) by default. */
  command?: string;
}

/** How long stopping waits for its STOPPING=1 to be read (systemd-notify's own barrier gives up after 5 s). */
const FLUSH_MS = 2000;

/** Tells systemd READY=1, WATCHDOG=1 (while the event loop turns) and STOPPING=1; does nothing without NOTIFY_SOCKET. */
export function createSystemdNotifier(deps: NotifierDeps) {
  const enabled = Boolean(deps.env.NOTIFY_SOCKET);
  const pingMs = watchdogPingMs(deps.env, deps.pid);
  const command = deps.command ?? 'systemd-notify';
  // Messages go one at a time, in order: READY=1 before the first ping, STOPPING=1 after the last.
  let chain: Promise<void> = Promise.resolve();
  let queued = 0;
  let timer: NodeJS.Timeout | undefined;
  let failed = false;
  let held = false;

  function sendNow(states: string[]): Promise<void> {
    return new Promise<void>((resolve) => {
      const child = spawn(command, states, { stdio: 'ignore', env: deps.env });
      // Logged once: a missing systemd-notify would otherwise fill the journal every interval.
      const fail = (why: Record<string, unknown>) => {
        if (!failed) deps.log.error({ ...why, command, states }, 'cannot notify systemd (Type=notify, WatchdogSec)');
        failed = true;
      };
      child.on('error', (err) => {
        fail({ err });
        resolve();
      });
      child.on('exit', (code) => {
        if (code !== 0) fail({ exitCode: code });
        resolve();
      });
    });
  }

  function send(...states: string[]): Promise<void> {
    queued++;
    chain = chain
      .then(() => sendNow(states))
      .then(() => {
        queued--;
      });
    return chain;
  }

  return {
    /** Listening and serving: READY=1, then WATCHDOG=1 every half interval. */
    ready(status: string): void {
      if (!enabled) return;
      void send('READY=1', `STATUS=${status}`);
      if (pingMs === undefined) return;
      deps.log.info({ pingMs }, 'systemd watchdog: pinging from the event loop');
      timer = setInterval(() => {
        // A ping still waiting on systemd is not piled on.
        if (queued === 0) void send('WATCHDOG=1');
      }, pingMs);
      timer.unref();
    },
    /**
     * An update is installed (src/modules/update/trial.ts): the box stops serving, but the process lives on and
     * watches the new release, so systemd hears no STOPPING=1 and the watchdog is still fed.
     */
    holdForInstall(status: string): void {
      held = true;
      if (enabled) void send(`STATUS=${status}`);
    },
    /** Shutting down: STOPPING=1; no more pings. */
    stopping(): void {
      if (held) return;
      clearInterval(timer);
      if (enabled) void send('STOPPING=1');
    },
    /** Waits (at most FLUSH_MS) for the messages still being sent, so the process does not end before them. */
    async close(): Promise<void> {
      if (!held) clearInterval(timer);
      let t: NodeJS.Timeout | undefined;
      await Promise.race([chain, new Promise((r) => (t = setTimeout(r, FLUSH_MS)))]);
      clearTimeout(t);
    },
  };
}

/** The notifier as one of the long-running parts (src/shared/runtime.ts): READY=1 at start, STOPPING=1 when draining. */
export function systemdService(notifier: ReturnType<typeof createSystemdNotifier>, status: () => string): Service {
  return serviceOf({
    start: () => notifier.ready(status()),
    drain: () => notifier.stopping(),
    stop: () => notifier.close(),
  });
}
