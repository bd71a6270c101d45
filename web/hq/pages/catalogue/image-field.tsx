import { useEffect, useState } from 'preact/hooks';
import { hq } from '../../api.js';
import { type ApiForm, Field, FormError, inputValue, useApiForm } from '../../form.js';
import { t } from '../../i18n.js';
import { changeProps, useImageUrl } from './common.js';
import { mainImageIndex, type Product } from './menu-tree.js';

/**
 * The product's main image: a file chosen is previewed first, then uploaded (POST /hq-api/api/media, the central
 * checks its type and size) and its returned url put in the product's media; the menu's save publishes it.
 */
export function ImageField(props: {
  product: Product;
  pointer: string;
  form: ApiForm;
  onChange: (p: Product) => void;
}) {
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
