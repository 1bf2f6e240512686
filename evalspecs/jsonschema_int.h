/* Shared by jsonschema.c and jsonschema_uri.c. */
#ifndef TALLY_ES_JSONSCHEMA_INT_H
#define TALLY_ES_JSONSCHEMA_INT_H

/* The reference ref resolved against the absolute URI base (RFC 3986,
 * section 5.2.2), as a new string; NULL when out of memory. */
char *tally__js_uri_resolve(const char *base, const char *ref);

#endif
