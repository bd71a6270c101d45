import type { CatalogueResponse } from '../../../shared/catalogue-protocol.js';
import { applyCatalogue, CatalogueApplyError, type CatalogueApplyDeps, ChecksumMismatch } from './apply.js';
import { applyInbox, type InboxDeps } from '../inbox/apply.js';

export interface AnswerDeps {
  catalogue: CatalogueApplyDeps;
  inbox: InboxDeps;
  /** After COMMIT: the ordering queue processes the orders just queued; the image fetcher looks at the menus. */
  afterCommit(): void;
}

/**
 * One answer of the central's long poll (docs/sync.md "Down: the catalogue"): its catalogue rows and headquarters'
 * entries for this venue, applied in ONE transaction with the new cursor. An answer without catalogue rows
 * (revs taken by entries, this venue's or another's) moves the cursor without the catalogue's work: the
 * checksum cannot have changed, and the central's must still equal the box's.
 */
export function applyCentralAnswer(
  deps: AnswerDeps,
  tenantId: string,
  res: CatalogueResponse,
): { items: number; venues: number; inbox: number } {
  const entries = Array.isArray(res.inbox) ? res.inbox : [];
  let inbox = 0;
  const applyEntries = () => {
    inbox = applyInbox(deps.inbox, tenantId, entries);
  };
  if (res.mode === 'changes' && Array.isArray(res.items) && res.items.length === 0) {
    if (res.tenant !== tenantId)
      throw new CatalogueApplyError(`the central sent tenant ${res.tenant}, this box is ${tenantId}`);
    if (!Number.isSafeInteger(res.rev)) throw new CatalogueApplyError('the central answered with an unexpected body');
    const { catalogue } = deps.catalogue;
    catalogue.transaction(() => {
      const state = catalogue.state();
      if (state.checksum !== res.checksum) throw new ChecksumMismatch(`drift at rev ${res.rev}: asking for a snapshot`);
      applyEntries();
      catalogue.setApplied(tenantId, res.rev, res.checksum, deps.catalogue.now());
    });
    deps.afterCommit();
    return { items: 0, venues: 0, inbox };
  }
  const applied = applyCatalogue({ ...deps.catalogue, alsoInTransaction: applyEntries }, tenantId, res);
  deps.afterCommit();
  return { ...applied, inbox };
}
