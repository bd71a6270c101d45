/** The catalogue page's words (web/hq/i18n.ts merges them); keys start with `catalogue.`. */
export default {
  pl: {} as Record<string, string>,
  en: {} as Record<string, string>,
};
