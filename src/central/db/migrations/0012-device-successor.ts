/**
 * A box enrolled again carries its history (docs/sync.md "Enrolling again"): the new device names the device it
 * follows. The unique index lets each device have one successor only, so a stolen old key and a second code
 * cannot fork its history after the box itself took it over.
 */
export const sql = `
ALTER TABLE devices ADD COLUMN predecessor_id text;
CREATE UNIQUE INDEX devices_predecessor ON devices (tenant_id, predecessor_id) WHERE predecessor_id IS NOT NULL;
`;
