import { useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { liveOf, useCatalogue } from '../../data.js';
import { Field, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { type ChangeAnswer, CreateError, changed, changeProps } from './common.js';
import { rootOf } from './menu-draft.js';
import { MenuEditor } from './menu-editor.js';
import { newCategory } from './menu-tree.js';

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
