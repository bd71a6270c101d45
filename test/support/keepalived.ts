import type { ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Lan } from './netns.js';

/**
 * keepalived (Debian 12's 2.2.7) for the standby-box tests: the config of one box, and the daemon started in
 * that box's namespace. native-config/keepalived.conf.example is the same config as an installer writes it on a
 * Raspberry Pi, with the reason for each setting.
 */

export interface KeepalivedOptions {
  /** The interface the VRRP adverts and the VIP go on. */
  iface: string;
  /** 1-255, the same on every box of one pair, different from any other VRRP pair on the LAN. */
  routerId: number;
  /** The box with the highest (effective) priority holds the VIP. */
  priority: number;
  /** Seconds between adverts; a fraction needs VRRPv3, which this config then asks for. Default 1. */
  advertInt?: number;
  /** This box's own address, and the other boxes': adverts go by unicast, so no multicast is needed. */
  srcIp: string;
  peers: string[];
  vip: string;
  prefixLen: number;
  /** A command run every `interval` s (whole seconds: 2.2.7 refuses fractions); after `fall` failures the box's
   * priority changes by `weight` (negative: down), after `rise` successes it is restored. */
  check?: { script: string; interval?: number; timeout?: number; fall?: number; rise?: number; weight?: number };
  /** Commands run on entering each state. */
  notify?: { master?: string; backup?: string; fault?: string };
  /** The VRRP instance's name, in the logs. Default VB. */
  instance?: string;
  /** A box that comes back with a higher priority leaves the VIP where it is (native-config's choice). */
  nopreempt?: boolean;
  /**
   * Seconds between gratuitous ARPs while MASTER (`garp_master_refresh`): after two masters (a cable), the
   * clients' ARP caches may still name the box that gave the address up; this brings them back.
   */
  garpRefresh?: number;
}

/** The text of one box's keepalived.conf. */
export function keepalivedConfig(o: KeepalivedOptions): string {
  const name = o.instance ?? 'VB';
  const advertInt = o.advertInt ?? 1;
  // VRRPv2 carries the interval in whole seconds; v3 (RFC 5798) in centiseconds, so 0.5 s needs version 3.
  const version = Number.isInteger(advertInt) ? 2 : 3;
  const q = (cmd: string) => `"${cmd.replaceAll('"', '\\"')}"`;
  const lines = [
    'global_defs {',
    // Scripts run as root, and only when no part of their path is writable by another user.
    '  enable_script_security',
    '  script_user root',
    `  vrrp_version ${version}`,
    '}',
  ];
  if (o.check) {
    const c = o.check;
    lines.push(
      'vrrp_script check {',
      `  script ${q(c.script)}`,
      `  interval ${c.interval ?? 1}`,
      `  timeout ${c.timeout ?? 1}`,
      `  fall ${c.fall ?? 2}`,
      `  rise ${c.rise ?? 2}`,
      `  weight ${c.weight ?? 0}`,
      '}',
    );
  }
  lines.push(
    `vrrp_instance ${name} {`,
    // Every box starts as BACKUP: the one with the highest priority becomes MASTER when no better advert comes.
    '  state BACKUP',
    `  interface ${o.iface}`,
    `  virtual_router_id ${o.routerId}`,
    `  priority ${o.priority}`,
    `  advert_int ${advertInt}`,
    `  unicast_src_ip ${o.srcIp}`,
    '  unicast_peer {',
    ...o.peers.map((p) => `    ${p}`),
    '  }',
    '  virtual_ipaddress {',
    `    ${o.vip}/${o.prefixLen} dev ${o.iface}`,
    '  }',
  );
  if (o.nopreempt) lines.push('  nopreempt');
  if (o.garpRefresh) lines.push(`  garp_master_refresh ${o.garpRefresh}`, '  garp_lower_prio_repeat 3');
  if (o.check) lines.push('  track_script {', '    check', '  }');
  if (o.notify?.master) lines.push(`  notify_master ${q(o.notify.master)}`);
  if (o.notify?.backup) lines.push(`  notify_backup ${q(o.notify.backup)}`);
  if (o.notify?.fault) lines.push(`  notify_fault ${q(o.notify.fault)}`);
  lines.push('}', '');
  return lines.join('\n');
}

/** notify commands that append MASTER, BACKUP or FAULT to `file`, one line a transition (readStates). */
export function notifyToFile(file: string): Required<NonNullable<KeepalivedOptions['notify']>> {
  // keepalived splits the command itself, honouring single quotes: /bin/sh does the redirection.
  const to = (state: string) => `/bin/sh -c 'echo ${state} >> ${file}'`;
  return { master: to('MASTER'), backup: to('BACKUP'), fault: to('FAULT') };
}

/** The transitions notifyToFile recorded, oldest first. */
export function readStates(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

export interface KeepalivedHandle {
  proc: ChildProcess;
  confFile: string;
  logFile: string;
  /** Everything keepalived logged so far. */
  log(): string;
  /** The state the log last reported ('MASTER', 'BACKUP', 'FAULT'), undefined before the first. */
  state(): string | undefined;
  /** Resolves once the VRRP child says "Startup complete"; rejects, with the log, if keepalived exits first. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, as systemd stops it: the VRRP child sends a priority 0 advert and removes the VIP. Bounded. */
  stop(): Promise<void>;
  /** SIGKILL to keepalived and its children at once, a box that died: nothing is sent, the VIP stays put. */
  kill(): Promise<void>;
}

/**
 * Starts keepalived in box `boxIndex`'s namespace with `confText`, its files in `dir`, `extraArgs` after ours
 * (`--config-id primary` for native-config/keepalived.conf.example).
 *
 * Several keepalived on one machine each need their own pid files (-p parent, -r VRRP child, -c checker
 * child): the defaults are in /run, which `ip netns exec` does not separate. -n keeps it in the foreground
 * (a child the test owns and close() can kill), -l -D log in detail to the console, captured in the log file,
 * -G keeps it out of syslog, and -P starts only the VRRP subsystem (no IPVS checker).
 */
const starts = new Map<string, number>();

export function startKeepalived(
  lan: Lan,
  boxIndex: number,
  confText: string,
  dir: string,
  extraArgs: string[] = [],
): KeepalivedHandle {
  const box = lan.boxes[boxIndex];
  if (!box) throw new Error(`no box ${boxIndex} on this LAN`);
  // A start of its own, files of its own: after a kill -9 the old VRRP child is a zombie until init reaps it,
  // and keepalived, finding its pid alive in the old pid file, would refuse to start ("already running").
  const run = (starts.get(box.ns) ?? 0) + 1;
  starts.set(box.ns, run);
  const file = (ext: string) => join(dir, `keepalived-${box.name}-${run}${ext}`);
  const confFile = file('.conf');
  const logFile = file('.log');
  writeFileSync(confFile, confText);
  const out = openSync(logFile, 'a');
  const pidFiles = ['-p', file('.pid'), '-r', file('-vrrp.pid'), '-c', file('-check.pid')];
  const args = ['-n', '-l', '-D', '-G', '-P', '-f', confFile, ...pidFiles, ...extraArgs];
  const proc = lan.spawn(box.ns, '/usr/sbin/keepalived', args, { stdio: ['ignore', out, out] });
  closeSync(out);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const running = () => proc.exitCode === null && proc.signalCode === null;
  const log = () => readFileSync(logFile, 'utf8');
  const killGroup = () => {
    try {
      process.kill(-proc.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  return {
    proc,
    confFile,
    logFile,
    log,
    state: () => [...log().matchAll(/Entering (\w+) STATE/g)].at(-1)?.[1],
    async ready(timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!log().includes('Startup complete')) {
        if (!running() || Date.now() > deadline)
          throw new Error(`keepalived in ${box.ns} did not start (${logFile}):\n${log().slice(-1500)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (!running()) return;
      proc.kill('SIGTERM');
      const timer = setTimeout(killGroup, 5000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (!running()) return;
      killGroup();
      await exited;
    },
  };
}
