/* The tallyd test fixture: see tallyd_fixture.h. */
#include "tallyd_fixture.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void td_sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int td_start(td_daemon_t *d, const tr_redis_t *server, const char *name,
             const char *const *args, const char *const *env) {
  if (d->log[0] == '\0') {
    snprintf(d->log, sizeof(d->log), "%s/tallyd-%s.log", server->dir, name);
    snprintf(d->consumer, sizeof(d->consumer), "%s", name);
    snprintf(d->mark, sizeof(d->mark), "TD_MARK=%d-%s-%ld", (int)getpid(), name,
             (long)time(NULL));
  }
  const char *argv[64];
  int n = 0;
  argv[n++] = TALLY_BINARY_DIR "/tallyd";
  argv[n++] = "--tasks";
  argv[n++] = TALLY_SOURCE_DIR "/examples/tasks";
  if (server->url[0] != '\0') {
    argv[n++] = "--redis";
    argv[n++] = server->url;
  }
  argv[n++] = "--workers";
  argv[n++] = "2";
  argv[n++] = "--consumer";
  argv[n++] = d->consumer;
  argv[n++] = "--log-level";
  argv[n++] = "debug";
  argv[n++] = "--worker";
  argv[n++] = TALLY_BINARY_DIR "/tally-worker";
  /* A port of its own: tests run side by side (args may say otherwise). */
  if (!d->default_http) {
    argv[n++] = "--http";
    argv[n++] = "127.0.0.1:0";
  }
  for (int i = 0; args && args[i] && n < 62; i++)
    argv[n++] = args[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    int fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      dup2(fd, 2);
      dup2(fd, 1);
    }
    putenv(d->mark);
    for (int i = 0; env && env[i]; i++)
      putenv((char *)env[i]);
    execv(argv[0], (char *const *)argv);
    _exit(127);
  }
  d->pid = pid;
  return 0;
}

void td_signal(td_daemon_t *d, int sig) {
  if (d->pid > 0)
    kill(d->pid, sig);
}

int td_wait(td_daemon_t *d, int timeout_ms) {
  if (d->pid <= 0)
    return -1;
  for (int waited = 0;; waited += 10) {
    int status;
    pid_t r = waitpid(d->pid, &status, WNOHANG);
    if (r == d->pid) {
      d->pid = 0;
      return status;
    }
    if (waited >= timeout_ms)
      return -1;
    td_sleep_ms(10);
  }
}

void td_kill(td_daemon_t *d) {
  if (d->pid <= 0)
    return;
  kill(d->pid, SIGKILL);
  waitpid(d->pid, NULL, 0);
  d->pid = 0;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL)
    return NULL;
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += got;
    if (cap - len < 1024) {
      char *nb = realloc(buf, cap * 2);
      if (nb == NULL) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (buf)
    buf[len] = '\0';
  return buf;
}

bool td_log_has(const td_daemon_t *d, const char *text) {
  char *log = slurp(d->log);
  bool has = log && strstr(log, text) != NULL;
  free(log);
  return has;
}

void td_log_dump(const td_daemon_t *d) {
  char *log = slurp(d->log);
  fprintf(stderr, "---- %s ----\n%s\n----\n", d->log, log ? log : "(none)");
  free(log);
}

void td_write_file(const char *dir, const char *name, const char *text) {
  char path[600];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

int td_marked(const td_daemon_t *d) {
  DIR *dir = opendir("/proc");
  if (dir == NULL)
    return -1;
  int count = 0;
  size_t marklen = strlen(d->mark);
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300], env[65536];
    snprintf(path, sizeof(path), "/proc/%s/environ", e->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
      continue;
    ssize_t n = read(fd, env, sizeof(env));
    close(fd);
    for (ssize_t i = 0; n > 0 && i + (ssize_t)marklen <= n;
         i += (ssize_t)strlen(env + i) + 1)
      if (strncmp(env + i, d->mark, marklen) == 0 && env[i + marklen] == '\0') {
        /* A zombie still has its environ readable? No: it is empty. */
        count++;
        break;
      }
  }
  closedir(dir);
  return count;
}

int td_children(const td_daemon_t *d, pid_t *pids, int max) {
  DIR *dir = opendir("/proc");
  if (dir == NULL || d->pid <= 0) {
    if (dir)
      closedir(dir);
    return 0;
  }
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL && n < max) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9')
      continue;
    char path[300], stat[1024];
    snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
      continue;
    ssize_t len = read(fd, stat, sizeof(stat) - 1);
    close(fd);
    if (len <= 0)
      continue;
    stat[len] = '\0';
    /* The parent is field 4, after the name in parentheses. */
    const char *p = strrchr(stat, ')');
    char state;
    int ppid;
    if (p && sscanf(p + 2, "%c %d", &state, &ppid) == 2 && ppid == d->pid &&
        state != 'Z')
      pids[n++] = (pid_t)atoi(e->d_name);
  }
  closedir(dir);
  return n;
}

redisContext *td_connect(const tr_redis_t *server) {
  redisContext *c = redisConnectUnix(server->sock);
  if (c == NULL || c->err) {
    fprintf(stderr, "cannot connect to %s\n", server->sock);
    abort();
  }
  return c;
}

void td_push(redisContext *c, const char *job, char *id) {
  redisReply *r = redisCommand(c, "XADD tally:jobs * job %b", job, strlen(job));
  if (id)
    snprintf(id, 64, "%s", r && r->type == REDIS_REPLY_STRING ? r->str : "");
  freeReplyObject(r);
}

void td_push_many(redisContext *c, size_t n, char (*ids)[64]) {
  char job[256];
  for (size_t i = 0; i < n; i++) {
    int len = snprintf(job, sizeof(job),
                       "{\"submission\":\"sub-%zu\",\"task\":\"sum\","
                       "\"participant\":\"p%zu\",\"evaluations\":{\"0\":1,"
                       "\"1\":0.5,\"2\":%zu,\"3\":0}}",
                       i, i % 7, i % 2);
    redisAppendCommand(c, "XADD tally:jobs * job %b", job, (size_t)len);
  }
  for (size_t i = 0; i < n; i++) {
    redisReply *r = NULL;
    redisGetReply(c, (void **)&r);
    if (ids)
      snprintf(ids[i], 64, "%s",
               r && r->type == REDIS_REPLY_STRING ? r->str : "");
    freeReplyObject(r);
  }
}

long long td_other_clients(redisContext *c) {
  redisReply *r = redisCommand(c, "CLIENT LIST TYPE normal");
  long long lines = 0;
  for (const char *p = r && r->type == REDIS_REPLY_STRING ? r->str : "";
       (p = strchr(p, '\n')) != NULL; p++)
    lines++;
  freeReplyObject(r);
  return lines - 1;
}

long long td_xlen(redisContext *c, const char *key) {
  redisReply *r = redisCommand(c, "XLEN %s", key);
  long long v = r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
  freeReplyObject(r);
  return v;
}

long long td_wait_outcomes(redisContext *c, long long n, int timeout_ms) {
  long long total = 0;
  for (int waited = 0; waited <= timeout_ms; waited += 20) {
    total = td_xlen(c, "tally:results") + td_xlen(c, "tally:dead");
    if (total >= n)
      break;
    td_sleep_ms(20);
  }
  return total;
}

long long td_pending(redisContext *c) {
  redisReply *r = redisCommand(c, "XPENDING tally:jobs tallyd");
  long long v = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0 &&
                        r->element[0]->type == REDIS_REPLY_INTEGER
                    ? r->element[0]->integer
                    : 0;
  freeReplyObject(r);
  return v;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The value of field name in a stream entry's fields, or NULL. */
static const redisReply *entry_field(const redisReply *f, const char *name) {
  for (size_t k = 0; k + 1 < f->elements; k += 2)
    if (strcmp(f->element[k]->str, name) == 0)
      return f->element[k + 1];
  return NULL;
}

/* The result a results entry names (its "body" key), parsed; NULL when
 * the entry names none or the key is gone. */
static cJSON *body_of(redisContext *c, const redisReply *f) {
  const redisReply *key = entry_field(f, "body");
  if (key == NULL)
    return NULL;
  redisReply *v = redisCommand(c, "GET %b", key->str, key->len);
  cJSON *j = v && v->type == REDIS_REPLY_STRING ? cJSON_Parse(v->str) : NULL;
  freeReplyObject(v);
  return j;
}

/* Appends the job ids named by the outcomes of one stream: for a result,
 * the "id" of the body its entry names, or "?" (no body, or one of
 * another job than the entry's). */
static void collect(redisContext *c, const char *key, bool results, char ***out,
                    size_t *n, size_t *cap) {
  char start[80] = "-";
  for (;;) {
    redisReply *r = redisCommand(c, "XRANGE %s %s + COUNT 1000", key, start);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
      freeReplyObject(r);
      return;
    }
    for (size_t i = 0; i < r->elements; i++) {
      redisReply *f = r->element[i]->element[1];
      for (size_t k = 0; k + 1 < f->elements; k += 2) {
        const char *name = f->element[k]->str;
        const char *v = f->element[k + 1]->str;
        char *id = NULL;
        if (results && strcmp(name, "body") == 0) {
          cJSON *j = body_of(c, f);
          const cJSON *x = cJSON_GetObjectItemCaseSensitive(j, "id");
          const redisReply *e = entry_field(f, "entry");
          bool same =
              cJSON_IsString(x) && e && strcmp(x->valuestring, e->str) == 0;
          id = strdup(same ? x->valuestring : "?");
          cJSON_Delete(j);
        } else if (!results && strcmp(name, "id") == 0) {
          id = strdup(v);
        }
        if (id) {
          if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 1024;
            *out = realloc(*out, *cap * sizeof(**out));
          }
          (*out)[(*n)++] = id;
        }
      }
    }
    snprintf(start, sizeof(start), "(%s",
             r->element[r->elements - 1]->element[0]->str);
    freeReplyObject(r);
  }
}

int td_check_exactly_once(redisContext *c, char (*ids)[64], size_t n) {
  char **got = NULL;
  size_t ngot = 0, cap = 0;
  collect(c, "tally:results", true, &got, &ngot, &cap);
  collect(c, "tally:dead", false, &got, &ngot, &cap);
  char **want = malloc(n * sizeof(*want));
  for (size_t i = 0; i < n; i++)
    want[i] = ids[i];
  qsort(want, n, sizeof(*want), cmp_str);
  if (ngot)
    qsort(got, ngot, sizeof(*got), cmp_str);
  int problems = 0;
  size_t i = 0, k = 0;
  while (i < n || k < ngot) {
    int cmp = i == n ? 1 : k == ngot ? -1 : strcmp(want[i], got[k]);
    if (cmp < 0) {
      if (problems++ < 20)
        fprintf(stderr, "job %s has no outcome\n", want[i]);
      i++;
    } else if (cmp > 0) {
      if (problems++ < 20)
        fprintf(stderr, "outcome for unknown job %s\n", got[k]);
      k++;
    } else {
      size_t same = 0;
      while (k < ngot && strcmp(want[i], got[k]) == 0) {
        same++;
        k++;
      }
      if (same > 1 && problems++ < 20)
        fprintf(stderr, "job %s has %zu outcomes\n", want[i], same);
      i++;
    }
  }
  for (size_t j = 0; j < ngot; j++)
    free(got[j]);
  free(got);
  free(want);
  return problems;
}

cJSON *td_result_of(redisContext *c, const char *id) {
  redisReply *r = redisCommand(c, "XRANGE tally:results - +");
  cJSON *found = NULL;
  for (size_t i = 0; r && i < r->elements && !found; i++) {
    const redisReply *f = r->element[i]->element[1];
    const redisReply *e = entry_field(f, "entry");
    if (e != NULL && strcmp(e->str, id) == 0)
      found = body_of(c, f);
  }
  freeReplyObject(r);
  return found;
}

cJSON *td_public_events(redisContext *c) {
  cJSON *all = cJSON_CreateArray();
  redisReply *r = redisCommand(c, "XRANGE tally:public - +");
  for (size_t i = 0; r && r->type == REDIS_REPLY_ARRAY && i < r->elements;
       i++) {
    const redisReply *ev = entry_field(r->element[i]->element[1], "event");
    cJSON *e = ev ? cJSON_Parse(ev->str) : NULL;
    if (e == NULL)
      continue;
    const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, "view_key");
    if (cJSON_IsString(k)) {
      redisReply *v = redisCommand(c, "GET %s", k->valuestring);
      cJSON *view =
          v && v->type == REDIS_REPLY_STRING ? cJSON_Parse(v->str) : NULL;
      freeReplyObject(v);
      cJSON_AddItemToObject(e, "view", view ? view : cJSON_CreateNull());
    }
    cJSON_AddItemToArray(all, e);
  }
  freeReplyObject(r);
  return all;
}

char *td_public_text(redisContext *c) {
  cJSON *all = td_public_events(c);
  size_t cap = 1, len = 0;
  char *out = calloc(1, cap);
  const cJSON *e;
  cJSON_ArrayForEach(e, all) {
    char *t = cJSON_PrintUnformatted(e);
    size_t n = strlen(t);
    out = realloc(out, cap += n + 1);
    memcpy(out + len, t, n);
    len += n;
    out[len++] = '\n';
    out[len] = '\0';
    free(t);
  }
  cJSON_Delete(all);
  return out;
}

char *td_dead_field(redisContext *c, const char *id, const char *field) {
  redisReply *r = redisCommand(c, "XRANGE tally:dead - +");
  char *out = NULL;
  for (size_t i = 0; r && i < r->elements && !out; i++) {
    redisReply *f = r->element[i]->element[1];
    const char *eid = NULL, *val = NULL;
    for (size_t k = 0; k + 1 < f->elements; k += 2) {
      if (strcmp(f->element[k]->str, "id") == 0)
        eid = f->element[k + 1]->str;
      if (strcmp(f->element[k]->str, field) == 0)
        val = f->element[k + 1]->str;
    }
    if (eid && val && strcmp(eid, id) == 0)
      out = strdup(val);
  }
  freeReplyObject(r);
  return out;
}

/* The port tallyd's log says it listens on (it was given port 0). */
int td_http_port(td_daemon_t *d) {
  for (int waited = 0; waited < 15000; waited += 50) {
    FILE *f = fopen(d->log, "r");
    char line[1024];
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
      const char *at = strstr(line, "http: listening on 127.0.0.1:");
      if (at != NULL) {
        fclose(f);
        return atoi(at + strlen("http: listening on 127.0.0.1:"));
      }
    }
    if (f != NULL)
      fclose(f);
    usleep(50000);
  }
  td_log_dump(d);
  cr_assert_fail("tallyd never said where HTTP listens");
  return -1;
}

td_http_t td_http(const char *dir, int port, const char *path,
                  const char *extra) {
  char out[512], cmd[1400];
  snprintf(out, sizeof(out), "%s/http-body", dir);
  snprintf(cmd, sizeof(cmd),
           "curl -s -o '%s' -w '%%{http_code}' --max-time 5 %s "
           "'http://127.0.0.1:%d%s'",
           out, extra ? extra : "", port, path);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  char code[16] = "";
  if (fgets(code, sizeof(code), p) == NULL)
    code[0] = '\0';
  pclose(p);
  td_http_t r = {.status = atoi(code)};
  FILE *f = fopen(out, "r");
  r.body = calloc(1, 1 << 20);
  if (f != NULL) {
    size_t n = fread(r.body, 1, (1 << 20) - 1, f);
    r.body[n] = '\0';
    fclose(f);
  }
  unlink(out);
  return r;
}

double td_metric(const char *dir, int port, const char *name) {
  td_http_t r = td_http(dir, port, "/metrics", "");
  char want[128];
  snprintf(want, sizeof(want), "\n%s ", name);
  const char *at = r.body != NULL ? strstr(r.body, want) : NULL;
  double v = at != NULL ? strtod(at + strlen(want), NULL) : -1;
  free(r.body);
  return v;
}

void td_copy_tasks(const char *dir, char *out, size_t len) {
  snprintf(out, len, "%s/tasks", dir);
  char cmd[1400];
  snprintf(cmd, sizeof(cmd), "cp -r '%s/examples/tasks' '%s'", TALLY_SOURCE_DIR,
           out);
  cr_assert_eq(system(cmd), 0, "%s", cmd);
}

void td_put(const char *dir, const char *name, const char *text) {
  char path[1200];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "%s", path);
  fputs(text, f);
  fclose(f);
}

bool td_wait_ready(td_daemon_t *d, const char *dir, int timeout_ms, char *why,
                   size_t len) {
  int port = td_http_port(d);
  snprintf(why, len, "no answer");
  for (int waited = 0; waited < timeout_ms; waited += 50) {
    td_http_t r = td_http(dir, port, "/readyz", "");
    snprintf(why, len, "%s", r.body != NULL ? r.body : "no answer");
    free(r.body);
    if (r.status == 200)
      return true;
    usleep(50000);
  }
  return false;
}

int td_push_file(redisContext *c, const char *path) {
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  char line[8192];
  int n = 0;
  while (fgets(line, sizeof(line), f) != NULL) {
    line[strcspn(line, "\n")] = '\0';
    td_push(c, line, NULL);
    n++;
  }
  fclose(f);
  return n;
}
