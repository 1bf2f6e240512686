/* Shared by jsonschema.c, jsonschema_uri.c and jsonschema_regex.c. */
#ifndef TALLY_ES_JSONSCHEMA_INT_H
#define TALLY_ES_JSONSCHEMA_INT_H

/* The reference ref resolved against the absolute URI base (RFC 3986,
 * section 5.2.2), as a new string; NULL when out of memory. */
char *tally__js_uri_resolve(const char *base, const char *ref);

/* Whether s matches the ECMA-262 pattern p (PCRE2, Unicode); -1 for a
 * pattern PCRE2 refuses. */
int tally__js_regex_match(const char *p, const char *s);

#endif
