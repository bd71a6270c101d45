import { type ChildProcess, spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Logger } from '../../log.js';
import { insideSingleBinary } from '../../native/addons.js';

export interface BackupJobDeps {
  dataDir: string;
  /** The box's --config file: the backup reads its `backup` section (and the data dir comes on the command line). */
  configFile: string | undefined;
  log: Logger;
}

/**
 * The scheduled backup (docs/operations.md "Backups and restore"). It runs `venue-box backup now` as a child process at nice
 * 10: the copy, SQLite's fsync of it (seconds on a slow stick) and `PRAGMA integrity_check` (about 110 ms for
 * 32 MiB here, far more on a Pi and a bigger file) then block nobody's requests, and the scheduled backup and the
 * command are one code path. The box's own event loop only spawns and waits; its largest delay meanwhile is
 * logged with the result.
 */
export function createBackupJob({ dataDir, configFile, log }: BackupJobDeps) {
  let running: { proc: ChildProcess; done: Promise<void> } | undefined;
  let stopping = false;

  function run(): Promise<void> {
    if (running) {
      log.warn('backup: the previous one is still running; this one is skipped');
      return running.done;
    }
    const self = insideSingleBinary() ? [] : [resolve(process.argv[1]!)];
    const args = [...self, 'backup', 'now', '--data-dir', dataDir, ...(configFile ? ['--config', configFile] : [])];
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const started = Date.now();
    const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      if (proc.pid !== undefined) setPriority(proc.pid, 10);
    } catch {
      // a lower priority is a nicety
    }
    let stdout = '';
    let stderr = '';
    proc.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const done = new Promise<void>((resolveDone) => {
      let finished = false;
      const finish = (code: number | null, signal: string | null, spawnError?: Error) => {
        if (finished) return;
        finished = true;
        delay.disable();
        running = undefined;
        const ms = Date.now() - started;
        const loopDelayMaxMs = Math.round(delay.max / 1e6);
        const lines = stdout.trim().split('\n');
        if (stopping && code !== 0) {
          log.warn({ ms }, 'backup abandoned: the box is stopping (its temp files are removed)');
        } else if (code === 0) {
          const removed = lines.filter((l) => l.startsWith('removed by retention: ')).map((l) => l.slice(22));
          log.info({ file: lines.at(-1), ms, removed, loopDelayMaxMs }, 'backup written');
        } else {
          const error = spawnError?.message ?? (stderr.trim().replace(/^venue-box: /, '') || `exit ${code ?? signal}`);
          log.error({ error, exitCode: code, signal, ms }, 'backup failed');
        }
        resolveDone();
      };
      proc.once('error', (err) => finish(null, null, err));
      proc.once('close', (code, signal) => finish(code, signal));
    });
    running = { proc, done };
    return done;
  }

  return {
    run,
    /** Stops a backup in flight: it removes its temp files and exits. */
    async stop(): Promise<void> {
      stopping = true;
      const r = running;
      if (!r) return;
      r.proc.kill('SIGTERM');
      await r.done;
    },
  };
}
