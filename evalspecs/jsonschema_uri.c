/* URI references resolved against a base (RFC 3986, section 5), for the
 * $id and $ref of JSON schemas. */
#include "evalspecs/jsonschema_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* URIs (RFC 3986): parse, resolve a reference against a base. */

typedef struct uri_s {
  const char *scheme, *auth, *path, *query, *frag;
  size_t ls, la, lp, lq, lf;
  bool has_scheme, has_auth, has_query, has_frag;
} uri_t;

static void uri_parse(const char *s, uri_t *u) {
  memset(u, 0, sizeof(*u));
  const char *p = s;
  const char *colon = strpbrk(p, ":/?#");
  if (colon != NULL && *colon == ':' && colon != p) {
    u->has_scheme = true;
    u->scheme = p;
    u->ls = (size_t)(colon - p);
    p = colon + 1;
  }
  if (p[0] == '/' && p[1] == '/') {
    p += 2;
    u->has_auth = true;
    u->auth = p;
    u->la = strcspn(p, "/?#");
    p += u->la;
  }
  u->path = p;
  u->lp = strcspn(p, "?#");
  p += u->lp;
  if (*p == '?') {
    u->has_query = true;
    u->query = ++p;
    u->lq = strcspn(p, "#");
    p += u->lq;
  }
  if (*p == '#') {
    u->has_frag = true;
    u->frag = ++p;
    u->lf = strlen(p);
  }
}

/* remove_dot_segments of RFC 3986, section 5.2.4, into out. */
static void remove_dots(const char *in, size_t n, char *out) {
  char *buf = malloc(n + 1);
  if (buf == NULL) {
    memcpy(out, in, n);
    out[n] = '\0';
    return;
  }
  memcpy(buf, in, n);
  buf[n] = '\0';
  char *a = buf;
  size_t o = 0;
  while (*a) {
    if (strncmp(a, "../", 3) == 0) {
      a += 3;
    } else if (strncmp(a, "./", 2) == 0) {
      a += 2;
    } else if (strncmp(a, "/./", 3) == 0) {
      a += 2;
    } else if (strcmp(a, "/.") == 0) {
      a[1] = '\0';
    } else if (strncmp(a, "/../", 4) == 0 || strcmp(a, "/..") == 0) {
      a += 3;
      if (*a == '\0') {
        a--;
        *a = '/';
      }
      while (o > 0 && out[o - 1] != '/')
        o--;
      if (o > 0)
        o--;
    } else if (strcmp(a, ".") == 0 || strcmp(a, "..") == 0) {
      *a = '\0';
    } else {
      size_t k = (*a == '/') ? 1 : 0;
      k += strcspn(a + k, "/");
      memcpy(out + o, a, k);
      o += k;
      a += k;
    }
  }
  out[o] = '\0';
  free(buf);
}

/* The reference ref resolved against base (RFC 3986, section 5.2.2), as
 * a new string. */
char *tally__js_uri_resolve(const char *base, const char *ref) {
  uri_t b, r;
  uri_parse(base, &b);
  uri_parse(ref, &r);
  size_t cap = strlen(base) + strlen(ref) + 8;
  char *out = malloc(cap), *path = malloc(cap), *merged = malloc(cap);
  if (out == NULL || path == NULL || merged == NULL) {
    free(out);
    free(path);
    free(merged);
    return NULL;
  }
  const uri_t *sch = &r, *aut = &r, *qry = &r;
  if (r.has_scheme) {
    remove_dots(r.path, r.lp, path);
  } else {
    sch = &b;
    if (r.has_auth) {
      remove_dots(r.path, r.lp, path);
    } else {
      aut = &b;
      if (r.lp == 0) {
        memcpy(path, b.path, b.lp);
        path[b.lp] = '\0';
        if (!r.has_query)
          qry = &b;
      } else {
        if (r.path[0] == '/') {
          remove_dots(r.path, r.lp, path);
        } else {
          size_t m = 0;
          if (b.has_auth && b.lp == 0) {
            merged[m++] = '/';
          } else {
            const char *slash = NULL;
            for (const char *q = b.path; q < b.path + b.lp; q++)
              if (*q == '/')
                slash = q;
            if (slash != NULL) {
              memcpy(merged, b.path, (size_t)(slash - b.path + 1));
              m = (size_t)(slash - b.path + 1);
            }
          }
          memcpy(merged + m, r.path, r.lp);
          m += r.lp;
          merged[m] = '\0';
          remove_dots(merged, m, path);
        }
      }
    }
  }
  size_t o = 0;
  if (sch->has_scheme)
    o += (size_t)snprintf(out + o, cap - o, "%.*s:", (int)sch->ls, sch->scheme);
  if (aut->has_auth)
    o += (size_t)snprintf(out + o, cap - o, "//%.*s", (int)aut->la, aut->auth);
  o += (size_t)snprintf(out + o, cap - o, "%s", path);
  if (qry->has_query)
    o += (size_t)snprintf(out + o, cap - o, "?%.*s", (int)qry->lq, qry->query);
  if (r.has_frag)
    snprintf(out + o, cap - o, "#%.*s", (int)r.lf, r.frag);
  free(path);
  free(merged);
  return out;
}
