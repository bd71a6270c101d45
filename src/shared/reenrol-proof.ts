/**
 * What a box enrolling again signs with the key of the device it was (docs/sync.md "Enrolling again"): the
 * tenant, that device, and the new public key. Binding the new key means a proof seen on the wire cannot carry
 * the history to anybody else's key; the one-time code is still needed besides.
 */
export const reenrolProofText = (tenant: string, previousDeviceId: string, newPublicKeyBase64: string): string =>
  `venue-box re-enrol 1\n${tenant}\n${previousDeviceId}\n${newPublicKeyBase64}`;
