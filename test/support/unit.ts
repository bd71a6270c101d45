import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * What native-config/venue-box.service asks of systemd, for tests on a machine whose PID 1 is not systemd: before
 * each start `previous/venue-box update guard` (ExecStartPre), then `current/venue-box serve` (ExecStart), started
 * again after it exits (Restart=always, RestartSec) unless with 64, 65 or 78 (RestartPreventExitStatus). Each start
 * is a process group of its own, so kill9() ends it with everything it started, as systemd ends a unit's
 * control group.
 */
export interface Unit {
  /** Every log line of every start, in order. */
  logs: string[];
  starts: number;
  /** The port of the current start once it listens. */
  port(): number | undefined;
  /** The version that started last (from its `venue-box listening` line's process). */
  waitForLog(
    match: (entry: Record<string, unknown>) => boolean,
    timeoutMs: number,
    after?: number,
  ): Promise<Record<string, unknown>>;
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

const UNIT_FILE = fileURLToPath(new URL('../../native-config/venue-box.service', import.meta.url));

/**
 * The unit's command lines and the exits it does not restart, with the box's paths in place of /opt/venue-box, its
 * configuration file and /var/lib/venue-box: what runs here is what the unit runs.
 */
function unitCommands(dir: string, configFile: string, dataDir: string) {
  const text = readFileSync(UNIT_FILE, 'utf8');
  const line = (key: string) => {
    const value = new RegExp(`^${key}=(.*)$`, 'm').exec(text)?.[1];
    if (value === undefined) throw new Error(`native-config/venue-box.service has no ${key}=`);
    return value
      .replace(/^-/, '')
      .replaceAll('/opt/venue-box', dir)
      .replaceAll('/etc/venue-box/venue-box.jsonc', configFile)
      .replaceAll('/var/lib/venue-box', dataDir)
      .split(/\s+/);
  };
  return {
    pre: line('ExecStartPre'),
    start: line('ExecStart'),
    noRestart: line('RestartPreventExitStatus').map(Number),
    always: /^Restart=always$/m.test(text),
  };
}

export function runUnit(
  dir: string,
  configFile: string,
  dataDir: string,
  env: NodeJS.ProcessEnv = process.env,
  /** A binary of another architecture: run under this emulator (qemu user emulation). */
  emulator?: string,
): Unit {
  const unit = unitCommands(dir, configFile, dataDir);
  if (emulator) {
    unit.pre.unshift(emulator);
    unit.start.unshift(emulator);
  }
  const logs: string[] = [];
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> = Promise.resolve(null);
  let stopped = false;
  let port: number | undefined;
  let starts = 0;

  const guard = () => {
    const [command, ...args] = unit.pre;
    if (!existsSync(emulator ? args[0]! : command!)) return;
    const r = spawnSync(command!, args, { env, encoding: 'utf8', timeout: 60_000 });
    for (const line of `${r.stdout}${r.stderr}`.split('\n').filter(Boolean)) logs.push(`guard: ${line}`);
  };

  async function loop(): Promise<void> {
    while (!stopped) {
      guard();
      port = undefined;
      starts++;
      const [command, ...args] = unit.start;
      const proc = spawn(command!, args, {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      child = proc;
      exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
      for (const stream of [proc.stdout!, proc.stderr!]) {
        createInterface({ input: stream }).on('line', (line) => {
          logs.push(line);
          try {
            const entry = JSON.parse(line) as { msg?: string; port?: number; host?: string };
            // The trial's own listening line is on loopback port 0's answer; the unit's is on the configured host.
            if (entry.msg === 'venue-box listening' && entry.host !== '127.0.0.1') port = entry.port;
          } catch {
            // not JSON: kept as it is
          }
        });
      }
      const code = await exited;
      child = undefined;
      if ((code !== null && unit.noRestart.includes(code)) || (code === 0 && !unit.always)) {
        logs.push(`unit: exited with ${code}: not restarted`);
        return;
      }
      if (!stopped) await sleep(200);
    }
  }
  void loop();

  const parsed = (from: number) =>
    logs.slice(from).flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

  return {
    logs,
    get starts() {
      return starts;
    },
    port: () => port,
    async waitForLog(match, timeoutMs, after = 0) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        const found = parsed(after).find(match);
        if (found) return found;
        await sleep(100);
      }
      throw new Error(`no such log line within ${timeoutMs} ms; the last lines:\n${logs.slice(-30).join('\n')}`);
    },
    async kill9() {
      const c = child;
      if (c?.pid) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // gone already
        }
        await exited;
      }
    },
    async stop() {
      stopped = true;
      const c = child;
      if (c?.pid) {
        try {
          process.kill(-c.pid, 'SIGTERM');
        } catch {
          // gone already
        }
        await Promise.race([exited, sleep(20_000)]);
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
    },
  };
}
