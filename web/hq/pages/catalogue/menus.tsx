import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../../http.js';
import { hq } from '../../api.js';
import { type Catalogue, type Live, liveOf, loadCatalogue, useCatalogue } from '../../data.js';
import { type ApiForm, Field, FormError, inputValue, useApiForm } from '../../form.js';
import { money, t } from '../../i18n.js';
import {
  type ChangeAnswer,
  ConfirmButton,
  CreateError,
  changed,
  changeProps,
  RevNote,
  SaveError,
  useImageUrl,
} from './common.js';
import {
  CHANNELS,
  canonical,
  type Category,
  type Channel,
  edit,
  idsOf,
  isProduct,
  literalKeys,
  type MenuNode,
  mainImageIndex,
  move,
  newCategory,
  newId,
  newProduct,
  nodeAt,
  type Path,
  type Product,
  pointerOf,
  remove,
} from './menu-tree.js';

type MenuRow = Live<'menu'>;
/** A price as the API writes it ("12.50"); anything else is shown as typed, and the central refuses it. */
const PRICE = /^\d{1,9}(\.\d{1,2})?$/;
const rootOf = (row: MenuRow) => row.data.root as Category;

/** PATCH /hq-api/api/products/:productId/price answers the rev and the live menus it changed. */
interface PriceEverywhere extends ChangeAnswer {
  menus: string[];
}

/** Menus: the list and the editor of one (docs/console.md "Pages"). */
export function MenusView(props: { id: string; select: (id: string) => void }) {
  const catalogue = useCatalogue();
  const menus = liveOf(catalogue, 'menu').sort((a, b) => a.id.localeCompare(b.id));
  const row = menus.find((m) => m.id === props.id) ?? (props.id ? undefined : menus[0]);
  return (
    <div class="split">
      <section class="card" aria-labelledby="menus-h">
        <h2 id="menus-h">{t('catalogue.menus')}</h2>
        <ul class="plain-list" data-testid="menu-list">
          {menus.map((m) => (
            <li key={m.id}>
              <button
                type="button"
                class={`btn ghost node ${row?.id === m.id ? 'selected' : ''}`}
                aria-current={row?.id === m.id ? 'true' : undefined}
                onClick={() => props.select(m.id)}
              >
                {rootOf(m).details.literals.name || m.id} <span class="muted mono">{m.id}</span>
              </button>
            </li>
          ))}
        </ul>
        <NewMenuForm select={props.select} />
      </section>
      {row ? (
        <MenuEditor key={row.id} row={row} />
      ) : (
        <p class="muted">{catalogue ? t('catalogue.noMenu') : t('app.loading')}</p>
      )}
    </div>
  );
}

function NewMenuForm(props: { select: (id: string) => void }) {
  const form = useApiForm();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  return (
    <form
      class="stack"
      data-testid="new-menu"
      onSubmit={(e) => {
        e.preventDefault();
        const root = { ...newCategory('rootcat'), details: { literals: { name } } };
        void form
          .run(async () => {
            // If-Match "0": only if no menu has this id yet (never replaces one silently).
            const answer = await hq.send<ChangeAnswer>(
              'PUT',
              `/menus/${encodeURIComponent(id)}`,
              { root },
              { ifMatch: 0 },
            );
            await changed(answer, t('catalogue.menuWhat', { id }));
          })
          .then((ok) => {
            if (!ok) return;
            props.select(id);
            setId('');
            setName('');
          });
      }}
    >
      <h3>{t('catalogue.newMenu')}</h3>
      <CreateError form={form} />
      <Field label={t('catalogue.menuId')} error={form.fieldError('menuId')}>
        {(a) => <input {...a} {...changeProps(form.busy)} required value={id} onInput={(e) => setId(inputValue(e))} />}
      </Field>
      <Field label={t('catalogue.name')} error={form.fieldError('/root/details/literals/name')}>
        {(a) => <input {...a} {...changeProps(form.busy)} value={name} onInput={(e) => setName(inputValue(e))} />}
      </Field>
      <button type="submit" class="btn" {...changeProps(form.busy)}>
        {t('catalogue.createMenu')}
      </button>
    </form>
  );
}

interface Draft {
  /** The menu row's rev the edit started from: sent as If-Match. */
  baseRev: number;
  root: Category;
  /** The tree as the central holds it at baseRev (JSON), to tell an edit from none. */
  saved: string;
}
const draftOf = (row: MenuRow): Draft => ({ baseRev: row.rev, root: rootOf(row), saved: canonical(rootOf(row)) });

/**
 * One menu's tree: categories and products with their texts in the menu's languages, prices, channels, images and
 * order. The whole tree is one PUT with If-Match of the row's rev: saved whole or refused whole.
 */
function MenuEditor(props: { row: MenuRow }) {
  const { row } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(row));
  const [selected, setSelected] = useState<Path>([]);
  const form = useApiForm();
  const dirty = canonical(draft.root) !== draft.saved;
  // Someone's change arrived while nothing was edited here: shown at once. An edit in progress is never replaced.
  useEffect(() => {
    if (!dirty && row.rev !== draft.baseRev) setDraft(draftOf(row));
  }, [row.rev]);
  const savedIds = idsOf(JSON.parse(draft.saved) as Category);
  const setRoot = (root: Category) => setDraft((d) => ({ ...d, root }));
  const node = nodeAt(draft.root, selected) ?? draft.root;
  const path = nodeAt(draft.root, selected) ? selected : [];
  const keys = literalKeys(draft.root);

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
            onClick={() => {
              form.clear();
              setDraft(draftOf(row));
            }}
          >
            {t('catalogue.discard')}
          </button>
          <ConfirmButton
            label={t('catalogue.retireMenu')}
            confirm={t('catalogue.retireConfirm')}
            busy={form.busy}
            testid="menu-retire"
            onConfirm={() =>
              void form.run(async () => {
                const answer = await hq.send<ChangeAnswer>(
                  'DELETE',
                  `/menus/${encodeURIComponent(row.id)}`,
                  undefined,
                  {
                    ifMatch: row.rev,
                  },
                );
                await changed(answer, t('catalogue.menuWhat', { id: row.id }));
              })
            }
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
              onChange={(p) => setRoot(edit(draft.root, (copy) => replaceAt(copy, path, p)))}
              onPriceEverywhere={(productId, price, fresh) => {
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
              }}
            />
          ) : (
            <CategoryEditor
              key={pointerOf(path)}
              category={node}
              path={path}
              keys={keys.category}
              isNew={!savedIds.has(node.id)}
              form={form}
              onChange={(c) => setRoot(edit(draft.root, (copy) => replaceAt(copy, path, c)))}
            />
          )}
        </div>
      </div>
    </section>
  );
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

/** The central's messages about a node or anything inside it (the tree marks where to look). */
function errorsUnder(form: ApiForm, pointer: string): string[] {
  if (!(form.error instanceof ApiError)) return [];
  return form.error.codes
    .filter((c) => c.code === 'invalidField' && typeof c.args?.[0] === 'string')
    .filter((c) => c.args![0] === pointer || c.args![0]!.startsWith(`${pointer}/`))
    .map((c) => c.message);
}

/**
 * The central's messages for this node that no input shows (a pointer to the node itself, or a part of it without
 * an input): shown at the top of the node's editor.
 */
function NodeErrors(props: { form: ApiForm; pointer: string; shown: string[] }) {
  if (!(props.form.error instanceof ApiError)) return null;
  const own = props.form.error.codes.filter((c) => {
    const p = c.args?.[0];
    if (c.code !== 'invalidField' || typeof p !== 'string') return false;
    if (props.shown.includes(p)) return false;
    return p === props.pointer || (p.startsWith(`${props.pointer}/`) && !p.startsWith(`${props.pointer}/items/`));
  });
  if (own.length === 0) return null;
  return (
    <ul class="field-error" data-testid="node-errors">
      {own.map((c) => (
        <li key={c.args![0]}>{c.message}</li>
      ))}
    </ul>
  );
}

function TreeNode(props: { node: MenuNode; path: Path; selected: Path; select: (p: Path) => void; form: ApiForm }) {
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
function NodeActions(props: {
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

/** A node's texts, one input per literal key of the menu (its languages), plus a new key. */
function LiteralFields(props: {
  literals: Record<string, string>;
  keys: string[];
  pointer: string;
  form: ApiForm;
  onChange: (literals: Record<string, string>) => void;
}) {
  const [newKey, setNewKey] = useState('');
  const keys = [...new Set([...props.keys, ...Object.keys(props.literals)])];
  const ch = changeProps(props.form.busy);
  return (
    <fieldset class="literals">
      <legend>{t('catalogue.texts')}</legend>
      {keys.map((k) => {
        const long = k.startsWith('description');
        return (
          <Field
            key={k}
            label={`${t(`catalogue.literal.${k}`) === `catalogue.literal.${k}` ? k : t(`catalogue.literal.${k}`)} (${k})`}
            error={props.form.fieldError(`${props.pointer}/details/literals/${k}`)}
          >
            {(a) => {
              const value = props.literals[k] ?? '';
              const onInput = (e: Event) => {
                const v = inputValue(e);
                const next = { ...props.literals, [k]: v };
                if (v === '' && k !== 'name') delete next[k];
                props.onChange(next);
              };
              return long ? (
                <textarea {...a} {...ch} data-testid={`literal-${k}`} value={value} onInput={onInput} />
              ) : (
                <input {...a} {...ch} data-testid={`literal-${k}`} value={value} onInput={onInput} />
              );
            }}
          </Field>
        );
      })}
      <div class="row">
        <Field label={t('catalogue.newText')} hint={t('catalogue.newTextHint')}>
          {(a) => <input {...a} {...ch} value={newKey} onInput={(e) => setNewKey(inputValue(e).trim())} />}
        </Field>
        <button
          type="button"
          class="btn small"
          {...ch}
          disabled={ch.disabled || !newKey || newKey in props.literals}
          onClick={() => {
            props.onChange({ ...props.literals, [newKey]: '' });
            setNewKey('');
          }}
        >
          {t('catalogue.addText')}
        </button>
      </div>
    </fieldset>
  );
}

function IdField(props: {
  id: string;
  pointer: string;
  isNew: boolean;
  form: ApiForm;
  onChange: (id: string) => void;
}) {
  return (
    <Field
      label={t('catalogue.id')}
      error={props.form.fieldError(`${props.pointer}/id`)}
      hint={props.isNew ? undefined : t('catalogue.idFixed')}
    >
      {(a) => (
        <input
          {...a}
          {...changeProps(props.form.busy)}
          disabled={!props.isNew || props.form.busy || !hq.canWrite()}
          data-testid="node-id"
          value={props.id}
          onInput={(e) => props.onChange(inputValue(e))}
        />
      )}
    </Field>
  );
}

function CategoryEditor(props: {
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

function ProductEditor(props: {
  product: Product;
  path: Path;
  keys: string[];
  isNew: boolean;
  form: ApiForm;
  onChange: (p: Product) => void;
  onPriceEverywhere: (productId: string, price: string, fresh: Catalogue) => void;
}) {
  const { product, form } = props;
  const pointer = pointerOf(props.path);
  const ch = changeProps(form.busy);
  const priceForm = useApiForm();
  const [everywhere, setEverywhere] = useState<PriceEverywhere | null>(null);
  const channels = product.channels ?? [...CHANNELS];
  const setChannel = (c: Channel, on: boolean) => {
    const next = CHANNELS.filter((x) => (x === c ? on : channels.includes(x)));
    const p: Product = { ...product, channels: next };
    // All channels: the field is left out (the schema's "all when absent").
    if (next.length === CHANNELS.length) delete p.channels;
    props.onChange(p);
  };
  return (
    <div class="node-editor" data-testid="product-editor">
      <h3>{t('catalogue.product')}</h3>
      <NodeErrors
        form={form}
        pointer={pointer}
        shown={[`${pointer}/id`, `${pointer}/price`, `${pointer}/channels`, `${pointer}/details/media`]}
      />
      <div class="form-grid">
        <IdField
          id={product.id}
          pointer={pointer}
          isNew={props.isNew}
          form={form}
          onChange={(id) => props.onChange({ ...product, id })}
        />
        <Field
          label={t('catalogue.price')}
          error={form.fieldError(`${pointer}/price`) ?? priceForm.fieldError('/price')}
          hint={t('catalogue.priceHint')}
        >
          {(a) => (
            <input
              {...a}
              {...ch}
              inputMode="decimal"
              data-testid="product-price"
              value={product.price}
              onInput={(e) => props.onChange({ ...product, price: inputValue(e).replace(',', '.') })}
            />
          )}
        </Field>
      </div>
      <div class="price-everywhere">
        <button
          type="button"
          class="btn small"
          data-testid="price-everywhere"
          {...changeProps(priceForm.busy)}
          disabled={priceForm.busy || !hq.canWrite() || props.isNew}
          onClick={() =>
            void priceForm.run(async () => {
              const answer = await hq.send<PriceEverywhere>(
                'PATCH',
                `/products/${encodeURIComponent(product.id)}/price`,
                { price: product.price },
              );
              setEverywhere(answer);
              await changed(answer, t('catalogue.priceWhat', { id: product.id }));
              props.onPriceEverywhere(product.id, product.price, await loadCatalogue());
            })
          }
        >
          {t('catalogue.priceEverywhere')}
        </button>
        <span class="muted small">{t('catalogue.priceEverywhereHint')}</span>
        <FormError form={priceForm} />
        {everywhere && (
          <p data-testid="price-everywhere-result" role="status">
            {t('catalogue.priceEverywhereDone', { rev: everywhere.rev, menus: everywhere.menus.join(', ') })}
          </p>
        )}
      </div>
      <fieldset class="channels">
        <legend>{t('catalogue.channels')}</legend>
        {CHANNELS.map((c) => (
          <label key={c} class="check">
            <input
              type="checkbox"
              {...ch}
              data-testid={`channel-${c}`}
              checked={channels.includes(c)}
              onChange={(e) => setChannel(c, (e.currentTarget as HTMLInputElement).checked)}
            />
            {t(`catalogue.channel.${c}`)}
          </label>
        ))}
        {form.fieldError(`${pointer}/channels`) && (
          <span class="field-error">{form.fieldError(`${pointer}/channels`)}</span>
        )}
      </fieldset>
      <LiteralFields
        literals={product.details.literals}
        keys={props.keys}
        pointer={pointer}
        form={form}
        onChange={(literals) => props.onChange({ ...product, details: { ...product.details, literals } })}
      />
      <ImageField product={product} pointer={pointer} form={form} onChange={props.onChange} />
    </div>
  );
}

/**
 * The product's main image: a file chosen is previewed first, then uploaded (POST /hq-api/api/media, the central
 * checks its type and size) and its returned url put in the product's media; the menu's save publishes it.
 */
function ImageField(props: { product: Product; pointer: string; form: ApiForm; onChange: (p: Product) => void }) {
  const { product } = props;
  const index = mainImageIndex(product);
  const url = product.details.media[index]?.url ?? '';
  const shown = useImageUrl(url);
  const upload = useApiForm();
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(
    () => () => {
      if (preview) URL.revokeObjectURL(preview);
    },
    [preview],
  );
  const setUrl = (next: string) => {
    const media = product.details.media.length > 0 ? [...product.details.media] : [{ url: '', name: 'MAIN_IMG' }];
    media[index] = { ...media[index]!, url: next };
    props.onChange({ ...product, details: { ...product.details, media } });
  };
  const ch = changeProps(upload.busy || props.form.busy);
  return (
    <fieldset class="image-field" data-testid="image-field">
      <legend>{t('catalogue.image')}</legend>
      <div class="row">
        {shown ? (
          <img class="preview" src={shown} alt={t('catalogue.imageCurrent')} data-testid="image-current" />
        ) : (
          <span class="muted">{t('catalogue.noImage')}</span>
        )}
        {preview && (
          <figure>
            <img class="preview" src={preview} alt={t('catalogue.imageChosen')} data-testid="image-preview" />
            <figcaption class="small">{t('catalogue.imagePreview')}</figcaption>
          </figure>
        )}
      </div>
      <Field
        label={t('catalogue.imageUrl')}
        error={props.form.fieldError(`${props.pointer}/details/media/${index}/url`)}
      >
        {(a) => <input {...a} {...ch} data-testid="image-url" value={url} onInput={(e) => setUrl(inputValue(e))} />}
      </Field>
      <Field label={t('catalogue.imageFile')} hint={t('catalogue.imageFileHint')}>
        {(a) => (
          <input
            {...a}
            {...ch}
            type="file"
            accept="image/png,image/jpeg,image/webp"
            data-testid="image-file"
            onChange={(e) => {
              const f = (e.currentTarget as HTMLInputElement).files?.[0] ?? null;
              upload.clear();
              setFile(f);
              setPreview(f ? URL.createObjectURL(f) : null);
            }}
          />
        )}
      </Field>
      <FormError form={upload} />
      <button
        type="button"
        class="btn small"
        data-testid="image-upload"
        {...ch}
        disabled={ch.disabled || !file}
        onClick={() =>
          void upload.run(async () => {
            const answer = await hq.upload<{ url: string }>('/media', file!);
            setUrl(answer.url);
            setFile(null);
          })
        }
      >
        {t('catalogue.imageUpload')}
      </button>
    </fieldset>
  );
}
