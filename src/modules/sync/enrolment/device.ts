import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { keyIdOf } from '../../../shared/sync-protocol.js';
import type { EnrolResponse } from '../../../shared/sync-messages.js';

/** This box's identity at its central: written by `venue-box sync enrol` (again by `--again`), read by the sender. */
export interface Device {
  central: string;
  deviceId: string;
  tenant: string;
  venue: string;
  keyId: string;
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/** The device file in the data directory (0600: it holds the private key). */
export const DEVICE_FILE = 'sync-device.json';

/** The device last read from each file, with the file's identity then: read again only when the file changed. */
const loaded = new Map<string, { stamp: string; device: Device }>();

/**
 * The device file as it is now. Every step of the loops that talk to the central asks (central-loop.ts), so a
 * box enrolled again (`sync enrol --again` writes a new file by rename) signs with its new key from its next
 * step, without a restart (docs/sync.md "Enrolling again"); a stat is all an unchanged file costs. The same
 * object comes back while the file is unchanged, so a caller sees a new identity as a new object.
 */
export function loadDevice(dataDir: string): Device | undefined {
  const file = join(dataDir, DEVICE_FILE);
  const st = statSync(file, { throwIfNoEntry: false, bigint: true });
  if (!st) {
    loaded.delete(file);
    return undefined;
  }
  const stamp = `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  const known = loaded.get(file);
  if (known?.stamp === stamp) return known.device;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Omit<Device, 'secretKey' | 'publicKey'> & {
    secretKey: string;
  };
  const pair = nacl.sign.keyPair.fromSecretKey(Buffer.from(stored.secretKey, 'base64'));
  const device = { ...stored, secretKey: pair.secretKey, publicKey: pair.publicKey };
  loaded.set(file, { stamp, device });
  return device;
}

/** A new Ed25519 key pair, made with tweetnacl. */
export const newKeyPair = (): nacl.SignKeyPair => nacl.sign.keyPair();

/** Writes the device file atomically with mode 0600. */
export function saveDevice(dataDir: string, central: string, enrolled: EnrolResponse, pair: nacl.SignKeyPair): Device {
  if (enrolled.keyId !== keyIdOf(pair.publicKey))
    throw new Error('the central registered another key than this box sent');
  const file = join(dataDir, DEVICE_FILE);
  const tmp = `${file}.tmp`;
  const stored = {
    central,
    deviceId: enrolled.deviceId,
    tenant: enrolled.tenant,
    venue: enrolled.venue,
    keyId: enrolled.keyId,
    secretKey: Buffer.from(pair.secretKey).toString('base64'),
  };
  writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return { ...stored, secretKey: pair.secretKey, publicKey: pair.publicKey };
}
