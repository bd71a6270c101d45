import { useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { t } from '../../i18n.js';
import { ConfirmButton, changeProps, RevNote, SaveError } from './common.js';
import { CategoryEditor } from './category-editor.js';
import { type MenuRow, useMenuDraft } from './menu-draft.js';
import { NodeActions, TreeNode } from './menu-tree-view.js';
import { isProduct, literalKeys, nodeAt, type Path, pointerOf } from './menu-tree.js';
import { ProductEditor } from './product-editor.js';

/**
 * One menu's tree: categories and products with their texts in the menu's languages, prices, channels, images and
 * order; the tree on the left, the selected node's editor on the right. The save and its refusal: menu-draft.ts.
 */
export function MenuEditor(props: { row: MenuRow }) {
  const { row } = props;
  const { draft, form, dirty, savedIds, setRoot, save, loadCurrent, discard, retire, replace, priceEverywhere } =
    useMenuDraft(row);
  const [selected, setSelected] = useState<Path>([]);
  const node = nodeAt(draft.root, selected) ?? draft.root;
  const path = nodeAt(draft.root, selected) ? selected : [];
  const keys = literalKeys(draft.root);
  return (
    <section class="card menu-editor" aria-labelledby="menu-h" data-testid="menu-editor">
      <div class="row spread">
        <h2 id="menu-h">{t('catalogue.menuTitle', { id: row.id })}</h2>
        <div class="row">
          <button
            type="button"
            class="btn primary"
            data-testid="menu-save"
            {...changeProps(form.busy)}
            disabled={form.busy || !hq.canWrite() || !dirty}
            onClick={() => void save()}
          >
            {t('app.save')}
          </button>
          <button
            type="button"
            class="btn"
            data-change=""
            disabled={!dirty || form.busy || !hq.canWrite()}
            onClick={discard}
          >
            {t('catalogue.discard')}
          </button>
          <ConfirmButton
            label={t('catalogue.retireMenu')}
            confirm={t('catalogue.retireConfirm')}
            busy={form.busy}
            testid="menu-retire"
            onConfirm={retire}
          />
        </div>
      </div>
      <RevNote rev={draft.baseRev} />
      {dirty && <p class="badge warn">{t('catalogue.unsaved')}</p>}
      <SaveError form={form} onLoadCurrent={loadCurrent} />
      <div class="menu-split">
        <nav aria-label={t('catalogue.tree')} class="tree-wrap">
          <ul class="tree" data-testid="menu-tree">
            <TreeNode node={draft.root} path={[]} selected={path} select={setSelected} form={form} />
          </ul>
        </nav>
        <div>
          <NodeActions
            root={draft.root}
            path={path}
            node={node}
            setRoot={setRoot}
            select={setSelected}
            busy={form.busy}
          />
          {isProduct(node) ? (
            <ProductEditor
              key={pointerOf(path)}
              product={node}
              path={path}
              keys={keys.product}
              isNew={!savedIds.has(node.id)}
              form={form}
              onChange={(p) => replace(path, p)}
              onPriceEverywhere={priceEverywhere}
            />
          ) : (
            <CategoryEditor
              key={pointerOf(path)}
              category={node}
              path={path}
              keys={keys.category}
              isNew={!savedIds.has(node.id)}
              form={form}
              onChange={(c) => replace(path, c)}
            />
          )}
        </div>
      </div>
    </section>
  );
}
