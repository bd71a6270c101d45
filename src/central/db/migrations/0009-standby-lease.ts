/**
 * The standby lease (docs/sync.md "The standby lease"): the central is the witness of a venue's primary and hot
 * standby, which share one device. Per device, the lease it last granted: `standby_term` (one more at each
 * takeover), `standby_holder` (the box id holding it) and `standby_until` (on the central's clock). All null
 * until a box of the device first asks; the device row is locked FOR UPDATE while a request decides, as a batch
 * locks it, so two claims for one term serialise there.
 */
export const sql = `
ALTER TABLE devices
  ADD COLUMN standby_term bigint CHECK (standby_term >= 0),
  ADD COLUMN standby_holder uuid,
  ADD COLUMN standby_until timestamptz,
  ADD CONSTRAINT devices_standby_lease_whole
    CHECK ((standby_term IS NULL) = (standby_holder IS NULL) AND (standby_term IS NULL) = (standby_until IS NULL));
`;
