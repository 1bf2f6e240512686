/* Redis URLs (redis://, unix://) and where a password comes from: the
 * URL, a file, or the environment; never shown in a message. */
#include "config/error.h"
#include "redis/redis.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Percent-decodes n bytes of s into a malloc'ed string in *out. Returns
 * NULL, or what is wrong. */
static const char *pct_decode(const char *s, size_t n, const char *what,
                              char **out, char *buf, size_t buflen) {
  char *d = malloc(n + 1);
  if (d == NULL)
    return "out of memory";
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') {
      d[k++] = s[i];
      continue;
    }
    unsigned v = 0;
    if (i + 2 >= n || !isxdigit((unsigned char)s[i + 1]) ||
        !isxdigit((unsigned char)s[i + 2]) ||
        sscanf(s + i + 1, "%2x", &v) != 1 || v == 0) {
      free(d);
      snprintf(buf, buflen,
               "the %s has a bad percent escape (%%XX with two hex digits, "
               "not %%00)",
               what);
      return buf;
    }
    d[k++] = (char)v;
    i += 2;
  }
  d[k] = '\0';
  *out = d;
  return NULL;
}

/* Parses a database number: digits only, 0 to 1,000,000. */
static const char *parse_db(const char *s, size_t n, int *db) {
  if (n == 0 || n > 7)
    return "the database must be a number from 0 to 1000000 (redis://.../DB "
           "or unix://...?db=DB)";
  long v = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] < '0' || s[i] > '9')
      return "the database must be a number from 0 to 1000000 "
             "(redis://.../DB or unix://...?db=DB)";
    v = v * 10 + (s[i] - '0');
  }
  if (v > 1000000)
    return "the database must be a number from 0 to 1000000";
  *db = (int)v;
  return NULL;
}

/* Splits userinfo (n bytes: user[:password]) into u. */
static const char *parse_userinfo(tally_redis_url_t *u, const char *s, size_t n,
                                  char *buf, size_t buflen) {
  const char *colon = memchr(s, ':', n);
  size_t ul = colon ? (size_t)(colon - s) : n;
  const char *bad = NULL;
  if (ul > 0)
    bad = pct_decode(s, ul, "user name", &u->user, buf, buflen);
  if (bad == NULL && colon != NULL)
    bad = pct_decode(colon + 1, n - ul - 1, "password", &u->password, buf,
                     buflen);
  return bad;
}

/* The query of a unix:// URL: db, user and password, each once. */
static const char *parse_query(tally_redis_url_t *u, const char *q, char *buf,
                               size_t buflen) {
  bool seen_db = false;
  while (*q != '\0') {
    const char *amp = strchr(q, '&');
    size_t n = amp ? (size_t)(amp - q) : strlen(q);
    const char *eq = memchr(q, '=', n);
    if (eq == NULL)
      return "a query parameter is KEY=VALUE (db, user or password)";
    size_t kl = (size_t)(eq - q), vl = n - kl - 1;
    const char *v = eq + 1, *bad = NULL;
    if (kl == 2 && memcmp(q, "db", 2) == 0) {
      if (seen_db)
        return "db is given twice";
      seen_db = true;
      bad = parse_db(v, vl, &u->db);
    } else if (kl == 4 && memcmp(q, "user", 4) == 0) {
      if (u->user != NULL)
        return "the user is given twice";
      bad = pct_decode(v, vl, "user name", &u->user, buf, buflen);
    } else if (kl == 8 && memcmp(q, "password", 8) == 0) {
      if (u->password != NULL)
        return "the password is given twice";
      bad = pct_decode(v, vl, "password", &u->password, buf, buflen);
    } else {
      return "unknown query parameter (a unix:// URL takes db, user and "
             "password)";
    }
    if (bad != NULL)
      return bad;
    q += n + (amp ? 1 : 0);
  }
  return NULL;
}

#define URL_FORMS                                                              \
  "redis://[USER[:PASSWORD]@]IP[:PORT][/DB] or "                               \
  "unix://[USER[:PASSWORD]@]/PATH[?db=N] (or, with sentinels, "                \
  "sentinel://[USER[:PASSWORD]@]IP[:PORT][,IP[:PORT]...]/MASTER[/DB])"

/* Parses "IP[:PORT]" (IPv6 in brackets; hlen bytes at host) into *ip
 * (malloc'ed) and *port (dflt when none). Returns NULL or what is
 * wrong. */
static const char *parse_hostport(const char *host, size_t hlen, int dflt,
                                  char **ip, int *port_out) {
  const char *port = NULL, *end = host + hlen;
  size_t iplen = hlen;
  if (hlen > 0 && host[0] == '[') {
    const char *close = memchr(host, ']', hlen);
    if (close == NULL)
      return "an IPv6 address in a URL is written in brackets: [::1]";
    host++;
    iplen = (size_t)(close - host);
    if (close + 1 < end) {
      if (close[1] != ':')
        return "expected :PORT after the IPv6 address";
      port = close + 2;
    }
  } else {
    const char *colon = memchr(host, ':', hlen);
    if (colon != NULL) {
      iplen = (size_t)(colon - host);
      port = colon + 1;
    }
  }
  *port_out = dflt;
  if (port != NULL) {
    size_t pl = (size_t)(end - port);
    long v = pl == 0 ? -1 : 0;
    for (size_t i = 0; i < pl && v >= 0 && v <= 65535; i++)
      v = port[i] >= '0' && port[i] <= '9' ? v * 10 + (port[i] - '0') : -1;
    if (v <= 0 || v > 65535)
      return "the port must be a number from 1 to 65535";
    *port_out = (int)v;
  }
  if ((*ip = strndup(host, iplen)) == NULL)
    return "out of memory";
  unsigned char addr[16];
  if (inet_pton(AF_INET, *ip, addr) != 1 && inet_pton(AF_INET6, *ip, addr) != 1)
    return "the host must be an IP address (host names are not resolved)";
  return NULL;
}

/* The query of a sentinel:// URL: the sentinels' user and password. */
static const char *parse_sentinel_query(tally_redis_url_t *u, const char *q,
                                        char *buf, size_t buflen) {
  while (*q != '\0') {
    const char *amp = strchr(q, '&');
    size_t n = amp ? (size_t)(amp - q) : strlen(q);
    const char *eq = memchr(q, '=', n);
    size_t kl = eq ? (size_t)(eq - q) : n, vl = eq ? n - kl - 1 : 0;
    const char *bad = NULL;
    if (eq != NULL && kl == 13 && memcmp(q, "sentinel_user", 13) == 0) {
      if (u->sentinel_user != NULL)
        return "sentinel_user is given twice";
      bad = pct_decode(eq + 1, vl, "sentinel user name", &u->sentinel_user, buf,
                       buflen);
    } else if (eq != NULL && kl == 17 &&
               memcmp(q, "sentinel_password", 17) == 0) {
      if (u->sentinel_password != NULL)
        return "sentinel_password is given twice";
      bad = pct_decode(eq + 1, vl, "sentinel password", &u->sentinel_password,
                       buf, buflen);
    } else {
      return "unknown query parameter (a sentinel:// URL takes "
             "sentinel_user and sentinel_password; the data nodes' login "
             "goes before the sentinels, USER:PASSWORD@)";
    }
    if (bad != NULL)
      return bad;
    q += n + (amp ? 1 : 0);
  }
  return NULL;
}

/* The part of a sentinel:// URL after its user info: the sentinels (n
 * bytes at list), then tail: /MASTER[/DB][?QUERY]. */
static const char *parse_sentinels(tally_redis_url_t *u, const char *list,
                                   size_t n, const char *tail, char *buf,
                                   size_t buflen) {
  const char *end = list + n;
  for (const char *p = list; p <= end;) {
    const char *comma = memchr(p, ',', (size_t)(end - p));
    size_t len = comma ? (size_t)(comma - p) : (size_t)(end - p);
    if (len == 0)
      return "a sentinel:// URL names its sentinels, IP[:PORT] separated by "
             "commas";
    if (u->nsentinels == TALLY_REDIS_MAX_SENTINELS)
      return "a sentinel:// URL names at most 16 sentinels";
    tally_redis_addr_t *s = &u->sentinels[u->nsentinels++];
    const char *bad = parse_hostport(p, len, 26379, &s->host, &s->port);
    if (bad != NULL)
      return bad;
    if (comma == NULL)
      break;
    p = comma + 1;
  }
  if (*tail != '/' || tail[1] == '/' || tail[1] == '?' || tail[1] == '\0')
    return "a sentinel:// URL names the master after the sentinels: "
           "sentinel://IP:PORT,.../MASTER[/DB]";
  const char *name = tail + 1;
  size_t nl = strcspn(name, "/?");
  const char *bad =
      pct_decode(name, nl, "master name", &u->master, buf, buflen);
  if (bad != NULL)
    return bad;
  const char *after = name + nl;
  if (*after == '/') {
    size_t dl = strcspn(after + 1, "?");
    if ((bad = parse_db(after + 1, dl, &u->db)) != NULL)
      return bad;
    after += 1 + dl;
  }
  return *after == '?' ? parse_sentinel_query(u, after + 1, buf, buflen) : NULL;
}

/* Fills u from url. Returns NULL, or what is wrong (in buf, or static);
 * never a text that holds the password. */
static const char *parse_url(tally_redis_url_t *u, const char *url, char *buf,
                             size_t buflen) {
  if (strncmp(url, "rediss://", 9) == 0)
    return "rediss:// (TLS) is not supported: the hiredis tally is built "
           "with (0.14) has no TLS. Put stunnel in front of the server and "
           "give tally the local end of the tunnel as redis://127.0.0.1:PORT "
           "(docs/operations.md, \"Redis over TLS\")";
  bool unix_url = strncmp(url, "unix://", 7) == 0;
  bool sentinel = strncmp(url, "sentinel://", 11) == 0;
  if (!unix_url && !sentinel && strncmp(url, "redis://", 8) != 0)
    return "expected " URL_FORMS;
  const char *rest = url + (unix_url ? 7 : sentinel ? 11 : 8);
  /* The authority runs to the first '/' (or '?' for redis://). */
  size_t alen = strcspn(rest, unix_url ? "/" : "/?");
  const char *at = NULL;
  for (const char *p = rest; p < rest + alen; p++)
    if (*p == '@')
      at = p;
  const char *bad = NULL;
  if (at != NULL &&
      (bad = parse_userinfo(u, rest, (size_t)(at - rest), buf, buflen)) != NULL)
    return bad;
  const char *host = at ? at + 1 : rest;
  size_t hlen = (size_t)(rest + alen - host);
  const char *tail = rest + alen;
  if (unix_url) {
    if (hlen != 0 || *tail != '/')
      return "a Unix socket URL is unix://[USER[:PASSWORD]@]/PATH[?db=N]";
    const char *q = strchr(tail, '?');
    size_t plen = q ? (size_t)(q - tail) : strlen(tail);
    if ((u->path = strndup(tail, plen)) == NULL)
      return "out of memory";
    return q ? parse_query(u, q + 1, buf, buflen) : NULL;
  }
  if (hlen == 0)
    return "a TCP URL names its server: " URL_FORMS;
  if (sentinel)
    return parse_sentinels(u, host, hlen, tail, buf, buflen);
  if ((bad = parse_hostport(host, hlen, 6379, &u->host, &u->port)) != NULL)
    return bad;
  if (*tail == '?')
    return "a redis:// URL takes no query (give USER:PASSWORD@ before the "
           "host, or --redis-password-file)";
  if (*tail == '/' && tail[1] != '\0')
    return parse_db(tail + 1, strlen(tail + 1), &u->db);
  return NULL;
}

enum {
  REDACT_DATA = 1,    /* the data nodes' password: user info, password= */
  REDACT_SENTINEL = 2 /* the sentinels': sentinel_password= */
};

/* Writes url to out with the passwords in which (REDACT_ flags) replaced
 * by mask ("***"), or, when mask is NULL, taken out (a password in the
 * user info with its ':', and an '@' left with nothing before it; a query
 * parameter whole, with its separator). */
static void redact(const char *url, char *out, size_t outlen, const char *mask,
                   int which) {
  size_t n = 0;
#define PUT(c)                                                                 \
  do {                                                                         \
    if (n + 1 < outlen)                                                        \
      out[n++] = (c);                                                          \
  } while (0)
  const char *skip_from = NULL, *skip_to = NULL; /* the user info part */
  const char *scheme = strstr(url, "://");
  const char *rest = url; /* where the query may start: after the user info */
  if (scheme != NULL) {
    const char *auth = scheme + 3;
    size_t alen = strcspn(auth, strncmp(url, "unix", 4) == 0 ? "/" : "/?");
    rest = auth + alen;
    const char *at = NULL;
    for (const char *p = auth; p < auth + alen; p++)
      if (*p == '@')
        at = p;
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (colon != NULL && (which & REDACT_DATA)) {
      skip_from = mask ? colon + 1 : colon;
      skip_to = mask || colon != auth ? at : at + 1;
    }
  }
  const char *q = strchr(rest, '?');
  const char *stop = q != NULL ? q : url + strlen(url);
  for (const char *p = url; p < stop;) {
    if (p == skip_from) {
      for (const char *m = mask ? mask : ""; *m; m++)
        PUT(*m);
      p = skip_to;
      skip_from = NULL; /* once: an empty password has skip_to == it */
      continue;
    }
    PUT(*p);
    p++;
  }
  /* The query again, parameter by parameter. */
  bool first = true;
  for (const char *p = q != NULL ? q + 1 : NULL; p != NULL && *p != '\0';) {
    size_t len = strcspn(p, "&");
    bool data = len >= 9 && strncmp(p, "password=", 9) == 0;
    bool sent = len >= 18 && strncmp(p, "sentinel_password=", 18) == 0;
    bool hide =
        (data && (which & REDACT_DATA)) || (sent && (which & REDACT_SENTINEL));
    if (!hide || mask != NULL) {
      PUT(first ? '?' : '&');
      first = false;
      size_t keep = hide ? (size_t)(strchr(p, '=') + 1 - p) : len;
      for (size_t i = 0; i < keep; i++)
        PUT(p[i]);
      for (const char *m = hide ? mask : ""; *m; m++)
        PUT(*m);
    }
    p += len;
    if (*p == '&')
      p++;
  }
#undef PUT
  out[n] = '\0';
}

static int read_password(const char *path, const char *flag, char **out,
                         char *err, size_t errlen);

/* Settles one password of url (which: REDACT_DATA or REDACT_SENTINEL):
 * the URL's own or the first line of file (flag names it), into the
 * environment variable env; *clean gets the URL without it. */
static int settle_password(const char *url, const char *file, const char *flag,
                           const char *env, int which, char **clean, char *err,
                           size_t errlen) {
  *clean = NULL;
  tally_redis_url_t u;
  memset(&u, 0, sizeof(u));
  char buf[256], shown[1024];
  redact(url, shown, sizeof(shown), "***", REDACT_DATA | REDACT_SENTINEL);
  const char *bad = parse_url(&u, url, buf, sizeof(buf));
  if (bad == NULL && which == REDACT_SENTINEL && u.nsentinels == 0 &&
      file != NULL)
    bad = "--sentinel-password-file is for a sentinel:// URL";
  if (bad != NULL) {
    snprintf(err, errlen, "%s: %s", shown, bad);
    tally_redis_url_free(&u);
    return TALLY_EINVAL;
  }
  char **slot = which == REDACT_DATA ? &u.password : &u.sentinel_password;
  char *password = *slot;
  *slot = NULL;
  tally_redis_url_free(&u);
  if (password != NULL && password[0] == '\0') {
    free(password); /* an empty password is none */
    password = NULL;
  }
  int rc = 0;
  if (file != NULL) {
    if (password != NULL) {
      snprintf(err, errlen,
               "%s: the %spassword is given twice, in the URL "
               "and in %s",
               shown, which == REDACT_DATA ? "" : "sentinels' ", flag);
      rc = TALLY_EINVAL;
    } else {
      rc = read_password(file, flag, &password, err, errlen);
    }
  }
  if (rc == 0 && password != NULL && setenv(env, password, 1) != 0) {
    snprintf(err, errlen, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (password != NULL) {
    memset(password, 0, strlen(password));
    free(password);
  }
  if (rc != 0)
    return rc;
  /* Taking the password out never lengthens the URL. */
  size_t cap = strlen(url) + 1;
  if ((*clean = malloc(cap)) == NULL) {
    snprintf(err, errlen, "out of memory");
    return TALLY_ENOMEM;
  }
  redact(url, *clean, cap, NULL, which);
  return 0;
}

int tally_redis_credentials(const char *url, const char *password_file,
                            char **clean, char *err, size_t errlen) {
  return settle_password(url, password_file, "--redis-password-file",
                         TALLY_REDIS_PASSWORD_ENV, REDACT_DATA, clean, err,
                         errlen);
}

int tally_redis_sentinel_credentials(const char *url,
                                     const char *sentinel_password_file,
                                     char **clean, char *err, size_t errlen) {
  return settle_password(
      url, sentinel_password_file, "--sentinel-password-file",
      TALLY_SENTINEL_PASSWORD_ENV, REDACT_SENTINEL, clean, err, errlen);
}

int tally_redis_read_password(const char *path, char **out, char *err,
                              size_t errlen) {
  return read_password(path, "--redis-password-file", out, err, errlen);
}

int tally_redis_read_secret(const char *path, const char *flag, char **out,
                            char *err, size_t errlen) {
  return read_password(path, flag, out, err, errlen);
}

/* tally_redis_read_password, its messages naming flag. */
static int read_password(const char *path, const char *flag, char **out,
                         char *err, size_t errlen) {
  *out = NULL;
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s %s: %s", flag, path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return TALLY_EIO;
  }
  if (!S_ISREG(st.st_mode) || st.st_size > 4096) {
    snprintf(err, errlen, "%s %s: not a regular file of at most 4096 bytes",
             flag, path);
    close(fd);
    return TALLY_EINVAL;
  }
  char buf[4097];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n < 0) {
    snprintf(err, errlen, "%s %s: %s", flag, path, strerror(errno));
    return TALLY_EIO;
  }
  /* One line: a final newline (or CRLF) is not part of it. */
  if (n > 0 && buf[n - 1] == '\n')
    n--;
  if (n > 0 && buf[n - 1] == '\r')
    n--;
  buf[n] = '\0';
  int rc = 0;
  if (n == 0 || memchr(buf, '\0', (size_t)n) != NULL ||
      memchr(buf, '\n', (size_t)n) != NULL) {
    snprintf(err, errlen, "%s %s: must hold the password on one line", flag,
             path);
    rc = TALLY_EINVAL;
  } else if ((*out = strdup(buf)) == NULL) {
    snprintf(err, errlen, "out of memory");
    rc = TALLY_ENOMEM;
  }
  memset(buf, 0, sizeof(buf));
  return rc;
}

int tally_redis_url_parse(tally_redis_url_t *u, const char *url, char *err,
                          size_t errlen) {
  memset(u, 0, sizeof(*u));
  char buf[256];
  const char *bad = parse_url(u, url, buf, sizeof(buf));
  if (u->password != NULL && u->password[0] == '\0') {
    free(u->password); /* "user:@": no password, as the environment's "" */
    u->password = NULL;
  }
  char shown[1024];
  redact(url, shown, sizeof(shown), "***", REDACT_DATA | REDACT_SENTINEL);
  if (bad == NULL && u->password == NULL) {
    const char *env = getenv(TALLY_REDIS_PASSWORD_ENV);
    if (env != NULL && env[0] != '\0' && (u->password = strdup(env)) == NULL)
      bad = "out of memory";
  }
  if (u->sentinel_password != NULL && u->sentinel_password[0] == '\0') {
    free(u->sentinel_password);
    u->sentinel_password = NULL;
  }
  if (bad == NULL && u->nsentinels > 0 && u->sentinel_password == NULL) {
    const char *env = getenv(TALLY_SENTINEL_PASSWORD_ENV);
    if (env != NULL && env[0] != '\0' &&
        (u->sentinel_password = strdup(env)) == NULL)
      bad = "out of memory";
  }
  if (bad == NULL) {
    char plain[1024];
    /* The URL to show: without the password, wherever it came from. */
    redact(url, plain, sizeof(plain), NULL, REDACT_DATA | REDACT_SENTINEL);
    if ((u->display = strdup(plain)) == NULL)
      bad = "out of memory";
  }
  if (bad == NULL)
    return 0;
  snprintf(err, errlen, "%s: %s", shown, bad);
  tally_redis_url_free(u);
  return TALLY_EINVAL;
}

void tally_redis_url_free(tally_redis_url_t *u) {
  for (size_t i = 0; i < u->nsentinels; i++)
    free(u->sentinels[i].host);
  free(u->master);
  free(u->sentinel_user);
  if (u->sentinel_password != NULL)
    memset(u->sentinel_password, 0, strlen(u->sentinel_password));
  free(u->sentinel_password);
  free(u->host);
  free(u->path);
  free(u->user);
  if (u->password != NULL)
    memset(u->password, 0, strlen(u->password));
  free(u->password);
  free(u->display);
  memset(u, 0, sizeof(*u));
}
