/* JSON Schema's patterns (pattern, patternProperties): ECMA-262 regular
 * expressions, run with PCRE2 once their long Unicode property names are
 * made short. */
#include "evalspecs/jsonschema_int.h"
#include "evalspecs/textops.h"

#include <stdlib.h>
#include <string.h>

/* ECMA-262's long General_Category names, which PCRE2 reads short. */
static const char *const gc_names[][2] = {
    {"Letter", "L"},
    {"Cased_Letter", "L&"},
    {"Uppercase_Letter", "Lu"},
    {"Lowercase_Letter", "Ll"},
    {"Titlecase_Letter", "Lt"},
    {"Modifier_Letter", "Lm"},
    {"Other_Letter", "Lo"},
    {"Mark", "M"},
    {"Combining_Mark", "M"},
    {"Nonspacing_Mark", "Mn"},
    {"Spacing_Mark", "Mc"},
    {"Enclosing_Mark", "Me"},
    {"Number", "N"},
    {"Decimal_Number", "Nd"},
    {"digit", "Nd"},
    {"Letter_Number", "Nl"},
    {"Other_Number", "No"},
    {"Punctuation", "P"},
    {"punct", "P"},
    {"Connector_Punctuation", "Pc"},
    {"Dash_Punctuation", "Pd"},
    {"Open_Punctuation", "Ps"},
    {"Close_Punctuation", "Pe"},
    {"Initial_Punctuation", "Pi"},
    {"Final_Punctuation", "Pf"},
    {"Other_Punctuation", "Po"},
    {"Symbol", "S"},
    {"Math_Symbol", "Sm"},
    {"Currency_Symbol", "Sc"},
    {"Modifier_Symbol", "Sk"},
    {"Other_Symbol", "So"},
    {"Separator", "Z"},
    {"Space_Separator", "Zs"},
    {"Line_Separator", "Zl"},
    {"Paragraph_Separator", "Zp"},
    {"Other", "C"},
    {"Control", "Cc"},
    {"cntrl", "Cc"},
    {"Format", "Cf"},
    {"Surrogate", "Cs"},
    {"Private_Use", "Co"},
    {"Unassigned", "Cn"},
};

/* p with ECMA-262's property escapes (\p{Name}, \p{General_Category=Name},
 * \p{gc=Name}, \p{Script=Name}, \p{sc=Name}, and \P{...}) as PCRE2
 * reads them; a new string, NULL when out of memory. */
static char *ecma_pattern(const char *p) {
  size_t len = strlen(p);
  char *out = malloc(len + 1);
  if (out == NULL)
    return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len;) {
    const char *close = NULL;
    if (p[i] == '\\' && (p[i + 1] == 'p' || p[i + 1] == 'P') && p[i + 2] == '{')
      close = strchr(p + i + 3, '}');
    if (close != NULL) {
      const char *name = p + i + 3;
      size_t n = (size_t)(close - name);
      static const char *const prefixes[] = {
          "General_Category=", "gc=", "Script=", "sc="};
      for (size_t k = 0; k < 4; k++) {
        size_t pl = strlen(prefixes[k]);
        if (n > pl && strncmp(name, prefixes[k], pl) == 0) {
          name += pl;
          n -= pl;
          break;
        }
      }
      for (size_t k = 0; k < sizeof(gc_names) / sizeof(gc_names[0]); k++)
        if (strlen(gc_names[k][0]) == n &&
            strncmp(gc_names[k][0], name, n) == 0) {
          name = gc_names[k][1];
          n = strlen(name);
          break;
        }
      /* never longer than what it replaces */
      out[o++] = '\\';
      out[o++] = p[i + 1];
      out[o++] = '{';
      memcpy(out + o, name, n);
      o += n;
      out[o++] = '}';
      i = (size_t)(close - p) + 1;
      continue;
    }
    if (p[i] == '\\' && i + 1 < len)
      out[o++] = p[i++];
    out[o++] = p[i++];
  }
  out[o] = '\0';
  return out;
}

/* Whether s matches the ECMA-262 pattern p (PCRE2, Unicode); -1 for a
 * pattern PCRE2 refuses. */
int tally__js_regex_match(const char *p, const char *s) {
  char *pattern = ecma_pattern(p);
  if (pattern == NULL)
    return -1;
  char err[300];
  int rc = tally_es_regex(pattern, true, s, err, sizeof(err));
  free(pattern);
  return rc == TALLY_ES_RE_MATCH ? 1 : rc == TALLY_ES_RE_NO_MATCH ? 0 : -1;
}
