import { ApiError } from '../../../http.js';
import type { ApiForm } from '../../form.js';
import { money, t } from '../../i18n.js';
import { changeProps } from './common.js';
import {
  type Category,
  edit,
  idsOf,
  isProduct,
  type MenuNode,
  move,
  newCategory,
  newId,
  newProduct,
  nodeAt,
  type Path,
  pointerOf,
  remove,
} from './menu-tree.js';

/** A price as the API writes it ("12.50"); anything else is shown as typed, and the central refuses it. */
const PRICE = /^\d{1,9}(\.\d{1,2})?$/;

/** The central's messages about a node or anything inside it (the tree marks where to look). */
function errorsUnder(form: ApiForm, pointer: string): string[] {
  if (!(form.error instanceof ApiError)) return [];
  return form.error.codes
    .filter((c) => c.code === 'invalidField' && typeof c.args?.[0] === 'string')
    .filter((c) => c.args![0] === pointer || c.args![0]!.startsWith(`${pointer}/`))
    .map((c) => c.message);
}

/** One node of the tree and its children; a node marked when the central refused something inside it. */
export function TreeNode(props: {
  node: MenuNode;
  path: Path;
  selected: Path;
  select: (p: Path) => void;
  form: ApiForm;
}) {
  const { node, path } = props;
  const isSelected = pointerOf(path) === pointerOf(props.selected);
  const bad = errorsUnder(props.form, pointerOf(path)).length > 0;
  const label = node.details.literals.name || node.id;
  return (
    <li>
      <button
        type="button"
        class={`node ${isSelected ? 'selected' : ''} ${bad ? 'bad' : ''}`}
        aria-current={isSelected ? 'true' : undefined}
        data-testid={`node-${node.id}`}
        onClick={() => props.select(path)}
      >
        {isProduct(node) ? '' : '▸ '}
        {label}
        {isProduct(node) && <span class="muted"> · {PRICE.test(node.price) ? money(node.price) : node.price}</span>}
        {bad && <span class="field-error"> {t('catalogue.hasErrors')}</span>}
      </button>
      {!isProduct(node) && node.items.length > 0 && (
        <ul class="tree">
          {node.items.map((child, i) => (
            <TreeNode
              key={child.id}
              node={child}
              path={[...path, i]}
              selected={props.selected}
              select={props.select}
              form={props.form}
            />
          ))}
        </ul>
      )}
    </li>
  );
}

/** Order and structure: move up/down, remove, add a product or a category inside the selected category. */
export function NodeActions(props: {
  root: Category;
  path: Path;
  node: MenuNode;
  setRoot: (r: Category) => void;
  select: (p: Path) => void;
  busy: boolean;
}) {
  const { root, path, node } = props;
  const ch = changeProps(props.busy);
  const index = path[path.length - 1];
  const siblings = path.length > 0 ? (nodeAt(root, path.slice(0, -1)) as Category).items.length : 1;
  const shift = (by: -1 | 1) => {
    const next = move(root, path, by);
    props.setRoot(next.root);
    props.select(next.path);
  };
  const add = (kind: 'product' | 'category') => {
    const category = node as Category;
    const taken = idsOf(root);
    const child =
      kind === 'product' ? newProduct(newId('product', taken), category.id) : newCategory(newId('category', taken));
    props.setRoot(edit(root, (copy) => (nodeAt(copy, path) as Category).items.push(child)));
    props.select([...path, category.items.length]);
  };
  return (
    <div class="row node-actions" data-testid="node-actions">
      {path.length > 0 && (
        <>
          <button
            type="button"
            class="btn small"
            data-testid="move-up"
            {...ch}
            disabled={ch.disabled || index === 0}
            onClick={() => shift(-1)}
          >
            {t('catalogue.moveUp')}
          </button>
          <button
            type="button"
            class="btn small"
            data-testid="move-down"
            {...ch}
            disabled={ch.disabled || index === siblings - 1}
            onClick={() => shift(1)}
          >
            {t('catalogue.moveDown')}
          </button>
          <button
            type="button"
            class="btn small danger"
            data-testid="remove-node"
            {...ch}
            onClick={() => {
              props.setRoot(remove(root, path));
              props.select(path.slice(0, -1));
            }}
          >
            {isProduct(node) ? t('catalogue.removeProduct') : t('catalogue.removeCategory')}
          </button>
        </>
      )}
      {!isProduct(node) && (
        <>
          <button type="button" class="btn small" data-testid="add-product" {...ch} onClick={() => add('product')}>
            {t('catalogue.addProduct')}
          </button>
          <button type="button" class="btn small" data-testid="add-category" {...ch} onClick={() => add('category')}>
            {t('catalogue.addCategory')}
          </button>
        </>
      )}
    </div>
  );
}
