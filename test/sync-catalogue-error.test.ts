import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { enrol, FAST_SYNC, syncStatus, waitFor } from './support/sync.js';

// A central outage is over once a catalogue poll goes through (docs/sync.md "Down: the catalogue"): `sync status`
// stops showing its error then, with no catalogue change needed, also when the box was restarted meanwhile (the
// error is kept in its database). A real central, a real box, the fault proxy between them.
const CONFIG = { sync: { ...FAST_SYNC.sync, catalogueWaitSeconds: 1 } };

let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
afterAll(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
});

describe('the catalogue error of a central outage', () => {
  test('clears at the first poll that goes through, with no catalogue change, across a box restart', async () => {
    central = await startTestCentral();
    proxy = await startFaultProxy(central.port);
    box = await startTestBox({ config: CONFIG });
    await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
    const before = await waitFor('the catalogue applied', async () => {
      const s = await syncStatus(box!);
      return (s.catalogue?.rev ?? 0) > 0 && s.catalogue?.lastError === null ? s.catalogue : undefined;
    });

    proxy.set('down');
    const failing = await waitFor('the outage in sync status', async () => {
      const s = await syncStatus(box!);
      return s.catalogue?.lastError ? s.catalogue : undefined;
    });
    expect(failing.rev).toBe(before.rev);
    // Restarted during the outage: the error it recorded is still what it knows.
    const { dataDir } = box;
    await box.stop();
    box = await startTestBox({ dataDir, config: CONFIG });
    expect((await syncStatus(box)).catalogue?.lastError).toBeTruthy();

    proxy.set('pass');
    const after = await waitFor('the outage cleared', async () => {
      const s = await syncStatus(box!);
      return s.catalogue?.lastError === null ? s.catalogue : undefined;
    });
    // Nothing changed at the central: the poll that went through brought no change, and still cleared it.
    expect(after).toMatchObject({ rev: before.rev, checksum: before.checksum });

    // Cleared for good: a restart after the outage does not bring it back.
    await box.stop();
    box = await startTestBox({ dataDir, config: CONFIG });
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await syncStatus(box)).catalogue).toMatchObject({ rev: before.rev, lastError: null });
  }, 90_000);
});
