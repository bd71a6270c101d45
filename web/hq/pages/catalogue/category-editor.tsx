import type { ApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import type { Category, Path } from './menu-tree.js';
import { pointerOf } from './menu-tree.js';
import { IdField, LiteralFields, NodeErrors } from './node-fields.js';

/** The selected category (the root too): its id and its texts; its children are edited in the tree. */
export function CategoryEditor(props: {
  category: Category;
  path: Path;
  keys: string[];
  isNew: boolean;
  form: ApiForm;
  onChange: (c: Category) => void;
}) {
  const { category, form } = props;
  const pointer = pointerOf(props.path);
  return (
    <div class="node-editor" data-testid="category-editor">
      <h3>{props.path.length === 0 ? t('catalogue.rootCategory') : t('catalogue.category')}</h3>
      <NodeErrors form={form} pointer={pointer} shown={[`${pointer}/id`]} />
      <IdField
        id={category.id}
        pointer={pointer}
        isNew={props.isNew}
        form={form}
        onChange={(id) => props.onChange({ ...category, id })}
      />
      <LiteralFields
        literals={category.details.literals}
        keys={props.keys}
        pointer={pointer}
        form={form}
        onChange={(literals) => props.onChange({ ...category, details: { ...category.details, literals } })}
      />
    </div>
  );
}
