import { useEffect, useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { type Catalogue, type Live, liveOf, loadCatalogue } from '../../data.js';
import { useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { type ChangeAnswer, changed } from './common.js';
import { type Category, canonical, edit, idsOf, isProduct, type MenuNode, nodeAt, type Path } from './menu-tree.js';

export type MenuRow = Live<'menu'>;
export const rootOf = (row: MenuRow) => row.data.root as Category;

interface Draft {
  /** The menu row's rev the edit started from: sent as If-Match. */
  baseRev: number;
  root: Category;
  /** The tree as the central holds it at baseRev (JSON), to tell an edit from none. */
  saved: string;
}
const draftOf = (row: MenuRow): Draft => ({ baseRev: row.rev, root: rootOf(row), saved: canonical(rootOf(row)) });

/**
 * The edit of one menu's tree and its save. The whole tree is one PUT with If-Match of the row's rev: saved whole or
 * refused whole; a refusal (a 412 too) leaves the edit as typed until the user chooses to load the current version.
 */
export function useMenuDraft(row: MenuRow) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(row));
  const form = useApiForm();
  const dirty = canonical(draft.root) !== draft.saved;
  // Someone's change arrived while nothing was edited here: shown at once. An edit in progress is never replaced.
  useEffect(() => {
    if (!dirty && row.rev !== draft.baseRev) setDraft(draftOf(row));
  }, [row.rev]);
  const savedIds = idsOf(JSON.parse(draft.saved) as Category);
  const setRoot = (root: Category) => setDraft((d) => ({ ...d, root }));

  const save = () =>
    form.run(async () => {
      const answer = await hq.send<ChangeAnswer>(
        'PUT',
        `/menus/${encodeURIComponent(row.id)}`,
        { root: draft.root },
        { ifMatch: draft.baseRev },
      );
      setDraft((d) => ({
        baseRev: answer.changed ? answer.rev : d.baseRev,
        root: d.root,
        saved: canonical(d.root),
      }));
      await changed(answer, t('catalogue.menuWhat', { id: row.id }));
    });
  const loadCurrent = () => {
    void loadCatalogue(true).then((c) => {
      const fresh = liveOf(c, 'menu').find((m) => m.id === row.id);
      if (fresh) setDraft(draftOf(fresh));
    });
  };
  const discard = () => {
    form.clear();
    setDraft(draftOf(row));
  };
  const retire = () =>
    void form.run(async () => {
      const answer = await hq.send<ChangeAnswer>('DELETE', `/menus/${encodeURIComponent(row.id)}`, undefined, {
        ifMatch: row.rev,
      });
      await changed(answer, t('catalogue.menuWhat', { id: row.id }));
    });
  const replace = (path: Path, node: MenuNode) => setRoot(edit(draft.root, (copy) => replaceAt(copy, path, node)));
  const priceEverywhere = (productId: string, price: string, fresh: Catalogue) => {
    // The price went to every menu at one rev. When the menu held nothing else new (the central's tree
    // is this edit's base with that price), the edit continues from the new rev; otherwise the save
    // will meet the change (412) and the user chooses.
    const current = liveOf(fresh, 'menu').find((m) => m.id === row.id);
    const base = JSON.parse(draft.saved) as Category;
    const basePriced = edit(base, (copy) => setPriceIn(copy, productId, price));
    setDraft((d) => {
      const root = edit(d.root, (copy) => setPriceIn(copy, productId, price));
      if (current && canonical(rootOf(current)) === canonical(basePriced))
        return { baseRev: current.rev, root, saved: canonical(basePriced) };
      return { ...d, root };
    });
  };
  return { draft, form, dirty, savedIds, setRoot, save, loadCurrent, discard, retire, replace, priceEverywhere };
}

function replaceAt(root: Category, path: Path, node: MenuNode): void {
  if (path.length === 0) {
    Object.assign(root, node);
    return;
  }
  const parent = nodeAt(root, path.slice(0, -1)) as Category;
  parent.items[path[path.length - 1]!] = node;
}

function setPriceIn(node: MenuNode, productId: string, price: string): void {
  if (isProduct(node)) {
    if (node.id === productId) node.price = price;
  } else for (const c of node.items) setPriceIn(c, productId, price);
}
