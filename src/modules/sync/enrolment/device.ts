import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { keyIdOf } from '../../../shared/sync-protocol.js';
import type { EnrolResponse } from '../../../shared/sync-messages.js';

/** This box's identity at its central: written once by `venue-box sync enrol`, read by the sender. */
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

export function loadDevice(dataDir: string): Device | undefined {
  const file = join(dataDir, DEVICE_FILE);
  if (!existsSync(file)) return undefined;
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Omit<Device, 'secretKey' | 'publicKey'> & {
    secretKey: string;
  };
  const pair = nacl.sign.keyPair.fromSecretKey(Buffer.from(stored.secretKey, 'base64'));
  return { ...stored, secretKey: pair.secretKey, publicKey: pair.publicKey };
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
