import { type ChildProcess, execFile, execFileSync, type SpawnOptions, spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { skipWithout } from './system-packages.js';

/**
 * A venue LAN made of network namespaces, for the standby-box tests: one namespace per box, one for a client
 * (a waiter's tablet), and one holding the Linux bridge that joins them, so nothing changes in the machine's own
 * namespace. Each namespace has a veth to the bridge; box i is .(10+i), the client .3, and .100 is the floating
 * IP that keepalived moves (test/support/keepalived.ts).
 *
 * Namespace names are `vbnet-<pid>-<rand>-<role>`: the pid of the test worker that made them lets
 * removeLeftoverNamespaces tell a crashed run's namespaces from those of a run still going on this machine.
 * Interface names (at most 15 characters) live inside the namespaces, so they are short and fixed.
 */
export const NETNS_PREFIX = 'vbnet-';

const execFileAsync = promisify(execFile);
// The client is 'c'; boxes past the second take the letters after it.
const BOX_LETTERS = 'abdefghij';
const BRIDGE = 'br0';
const BOX_IFACE = 'eth0';

export interface LanHost {
  /** The namespace's name, for `ip netns exec` or Lan.spawn. */
  ns: string;
  ip: string;
  /** The interface inside the namespace that holds `ip`. */
  iface: string;
}

export interface LanBox extends LanHost {
  /** 'a' for box 0, 'b' for box 1. */
  name: string;
  /** Its cable's end on the bridge, inside the bridge namespace. */
  port: string;
}

export interface Lan {
  prefix: string;
  boxes: LanBox[];
  client: LanHost;
  /** The floating IP: on no interface until keepalived puts it on the master. */
  vip: string;
  prefixLen: number;
  /** Starts `cmd` in a namespace, in a process group of its own that close() kills. */
  spawn(ns: string, cmd: string, args: string[], opts?: SpawnOptions): ChildProcess;
  /** Runs `cmd` in a namespace to completion; its stdout, or a rejection with its stderr. */
  run(ns: string, cmd: string, args: string[], timeoutMs?: number): Promise<string>;
  /** Box i's cable pulled: its bridge port down (the box's own interface loses carrier). */
  cut(i: number): Promise<void>;
  restore(i: number): Promise<void>;
  /** The boxes no longer reach each other; each still reaches the client. */
  cutBetweenBoxes(): Promise<void>;
  restoreBetweenBoxes(): Promise<void>;
  /** Box i's outgoing packets wait `ms` (netem); 0 removes the delay. */
  delay(i: number, ms: number): Promise<void>;
  /** Whether this kernel has netem (sch_netem), which delay() needs. */
  canDelay(): Promise<boolean>;
  /** Kills every process spawned, then deletes every namespace made (the veths and bridge go with them). */
  close(): Promise<void>;
}

/**
 * True (skip) when network namespaces cannot be made here, after one warning line in the style of skipWithout:
 * not root, the Debian package iproute2 or keepalived missing, or the kernel refusing `ip netns add`.
 */
export function netnsUnavailable(testFile: string): boolean {
  if (skipWithout(testFile, 'iproute2', 'keepalived')) return true;
  const file = relative(process.cwd(), fileURLToPath(testFile));
  if (process.getuid?.() !== 0) {
    console.warn(`${file} skipped: needs root for network namespaces (ip netns)`);
    return true;
  }
  const probe = `${NETNS_PREFIX}${process.pid}-probe`;
  try {
    execFileSync('ip', ['netns', 'add', probe], { stdio: 'pipe' });
    execFileSync('ip', ['netns', 'del', probe], { stdio: 'pipe' });
    return false;
  } catch (err) {
    const why = String((err as { stderr?: Buffer }).stderr ?? err).trim();
    console.warn(`${file} skipped: cannot make a network namespace here (ip netns add: ${why})`);
    return true;
  }
}

const ip = (...args: string[]) => execFileAsync('ip', args).then((r) => r.stdout);

export async function createLan(opts: { boxes?: number; delayMs?: number } = {}): Promise<Lan> {
  const count = opts.boxes ?? 2;
  if (count < 1 || count > BOX_LETTERS.length) throw new Error(`createLan: 1 to ${BOX_LETTERS.length} boxes`);
  const prefix = `${NETNS_PREFIX}${process.pid}-${randomBytes(2).toString('hex')}-`;
  // A /24 of its own per LAN: the namespaces are private, but a random net makes a stray packet easy to place.
  const net = `10.213.${randomInt(1, 255)}`;
  const prefixLen = 24;
  const bridgeNs = `${prefix}lan`;
  const boxes: LanBox[] = [...BOX_LETTERS.slice(0, count)].map((name, i) => ({
    name,
    ns: `${prefix}${name}`,
    ip: `${net}.${10 + i}`,
    iface: BOX_IFACE,
    port: `port-${name}`,
  }));
  const client: LanHost = { ns: `${prefix}c`, ip: `${net}.3`, iface: BOX_IFACE };
  const made: string[] = [];
  const children = new Set<ChildProcess>();
  const state: LiveLan = { prefix, namespaces: made, children };
  live.add(state);

  const close = async () => {
    await killChildren(children);
    removeNamespaces(made);
    made.length = 0;
    live.delete(state);
  };
  try {
    for (const ns of [bridgeNs, ...boxes.map((b) => b.ns), client.ns]) {
      await ip('netns', 'add', ns);
      made.push(ns);
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
    }
    await ip('-n', bridgeNs, 'link', 'add', BRIDGE, 'type', 'bridge');
    await ip('-n', bridgeNs, 'link', 'set', BRIDGE, 'up');
    for (const host of [...boxes, { ...client, port: 'port-c' }]) {
      // Made from inside the bridge namespace with the far end placed straight into the host's: the names
      // never exist in the root namespace, so two LANs (or two test runs) never collide.
      await ip('-n', bridgeNs, 'link', 'add', host.port, 'type', 'veth', 'peer', 'name', host.iface, 'netns', host.ns);
      await ip('-n', bridgeNs, 'link', 'set', host.port, 'master', BRIDGE, 'up');
      await ip('-n', host.ns, 'addr', 'add', `${host.ip}/${prefixLen}`, 'dev', host.iface);
      await ip('-n', host.ns, 'link', 'set', host.iface, 'up');
    }
  } catch (err) {
    await close();
    throw err;
  }

  const boxAt = (i: number) => {
    const box = boxes[i];
    if (!box) throw new Error(`no box ${i} on this LAN (${boxes.length} boxes)`);
    return box;
  };
  const isolate = async (on: 'on' | 'off') => {
    // Bridge port isolation: an isolated port forwards only to ports that are not isolated, so the boxes lose
    // each other while both keep the client (kernel docs, bridge "isolated"; checked in the keepalived test).
    for (const box of boxes)
      await ip('-n', bridgeNs, 'link', 'set', 'dev', box.port, 'type', 'bridge_slave', 'isolated', on);
  };
  const run = async (ns: string, cmd: string, args: string[], timeoutMs = 10_000) =>
    (await execFileAsync('ip', ['netns', 'exec', ns, cmd, ...args], { timeout: timeoutMs })).stdout;

  const lan: Lan = {
    prefix,
    boxes,
    client,
    vip: `${net}.100`,
    prefixLen,
    spawn(ns, cmd, args, spawnOpts = {}) {
      // `ip netns exec` execs the command in place: the child's pid is the command's, and detached makes it
      // the leader of its own group, so killing the group also ends whatever it started (keepalived's children).
      const child = spawn('ip', ['netns', 'exec', ns, cmd, ...args], { ...spawnOpts, detached: true });
      children.add(child);
      child.once('exit', () => children.delete(child));
      return child;
    },
    run,
    cut: async (i) => void (await ip('-n', bridgeNs, 'link', 'set', boxAt(i).port, 'down')),
    restore: async (i) => void (await ip('-n', bridgeNs, 'link', 'set', boxAt(i).port, 'up')),
    cutBetweenBoxes: () => isolate('on'),
    restoreBetweenBoxes: () => isolate('off'),
    async delay(i, ms) {
      const box = boxAt(i);
      if (ms === 0) {
        await run(box.ns, 'tc', ['qdisc', 'del', 'dev', box.iface, 'root']).catch(() => undefined);
        return;
      }
      try {
        await run(box.ns, 'tc', ['qdisc', 'replace', 'dev', box.iface, 'root', 'netem', 'delay', `${ms}ms`]);
      } catch (err) {
        const why = String((err as { stderr?: string }).stderr ?? err).trim();
        throw new Error(`lan.delay: tc netem failed (${why}); the kernel needs sch_netem (lan.canDelay())`);
      }
    },
    async canDelay() {
      try {
        await run(client.ns, 'tc', ['qdisc', 'add', 'dev', 'lo', 'root', 'netem', 'delay', '0ms']);
        await run(client.ns, 'tc', ['qdisc', 'del', 'dev', 'lo', 'root']);
        return true;
      } catch {
        return false;
      }
    },
    close,
  };
  if (opts.delayMs) {
    try {
      for (let i = 0; i < count; i++) await lan.delay(i, opts.delayMs);
    } catch (err) {
      await close();
      throw err;
    }
  }
  return lan;
}

interface LiveLan {
  prefix: string;
  namespaces: string[];
  children: Set<ChildProcess>;
}
const live = new Set<LiveLan>();

/**
 * Closes every LAN of this process that a test left open; returns their prefixes. After each integration test
 * file (test/support/leftover-boxes.ts): vitest ends its workers with a signal, so no 'exit' handler runs there.
 */
export async function closeLeftoverLans(): Promise<string[]> {
  const prefixes: string[] = [];
  for (const lan of [...live]) {
    prefixes.push(lan.prefix);
    await killChildren(lan.children);
    removeNamespaces(lan.namespaces);
    live.delete(lan);
  }
  return prefixes;
}

/** SIGKILL to each child's process group, then waits (at most 3 s) for them to be gone. */
async function killChildren(children: Set<ChildProcess>): Promise<void> {
  const exits = [...children].map((child) =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          killGroup(child.pid);
        }),
  );
  await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 3000))]);
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Kills whatever still runs in each namespace (a process outside the groups we know, or one of a crashed run),
 * then deletes it: a namespace deleted while a process is in it would live on, unnamed, until that process ends.
 * Synchronous, so that it also works in an 'exit' handler.
 */
function removeNamespaces(names: string[]): void {
  for (const ns of names) {
    try {
      const pids = execFileSync('ip', ['netns', 'pids', ns], { stdio: 'pipe' }).toString().split(/\s+/);
      for (const pid of pids.filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // already gone
        }
      }
    } catch {
      // no such namespace any more
    }
    try {
      execFileSync('ip', ['netns', 'del', ns], { stdio: 'pipe' });
    } catch {
      // already deleted
    }
  }
}

/**
 * The namespaces of test workers that are gone (a crash, a SIGKILL, a timeout), with whatever still runs in
 * them; those of a worker still running are left alone, so two test runs on one machine do not cut each other's
 * LANs. For a vitest global setup (test/global-setup.ts). Returns the names removed; never throws.
 */
export function removeLeftoverNamespaces(prefix = NETNS_PREFIX): string[] {
  let listed: string;
  try {
    listed = execFileSync('ip', ['netns', 'list'], { stdio: 'pipe' }).toString();
  } catch {
    return [];
  }
  const leftovers = listed
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((ns) => ns.startsWith(prefix) && !ownerAlive(ns.slice(prefix.length)));
  removeNamespaces(leftovers);
  return leftovers;
}

/** Whether the pid a namespace name starts with (after the prefix) is a live process. */
function ownerAlive(rest: string): boolean {
  const pid = Number(rest.split('-')[0]);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// The last safety net, for a process that exits by itself (a script, not a vitest worker) without close().
// Only synchronous work runs in an 'exit' handler. A worker killed outright leaves its namespaces to
// removeLeftoverNamespaces, which the integration tests' global setup runs before and after the run.
process.on('exit', () => {
  for (const lan of live) {
    for (const child of lan.children) killGroup(child.pid);
    removeNamespaces(lan.namespaces);
  }
});
