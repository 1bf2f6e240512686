/* Measures tallyd end to end through a redis-server of its own: jobs per
 * second and enqueue-to-result latency, beside the ceiling of a bare Redis
 * cycle that does tallyd's Redis work without scoring. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "bench_jobs.h"
#include "bench_support.h"
#include "bench_tallyd.h"
#include "engine/engine.h"
#include "redis/scripts.h"
#include "redis_fixture.h"
#include "sse_clients.h"

/* ---- What the bench started, stopped at exit --------------------------- */

static struct { pid_t redis, tallyd, bare; } g;

static volatile sig_atomic_t interrupted;

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_interrupt(int sig) {
  (void)sig;
  interrupted = 1;
}

/* At exit: shows the logs of a failed run, then stops the bare cycle,
 * tallyd and redis-server (bench_begin removes the folder after). */
static void stop_all(void) {
  if (bench_failed()) {
    bench_show_log("tallyd.log");
    bench_show_log("redis.log");
  }
  if (g.bare > 0)
    bench_stop(g.bare, SIGTERM, 2000);
  if (g.tallyd > 0)
    bench_stop(g.tallyd, SIGTERM, 15000);
  if (g.redis > 0)
    bench_stop(g.redis, SIGTERM, 10000);
  g.bare = g.tallyd = g.redis = 0;
}

/* ---- The task and the jobs ---------------------------------------------- */

/* Writes the rest of a job after its submission member: participant and
 * evaluations as objects with text, time and memory. Each subtask has its
 * own skill: mostly correct answers, some wrong ones, some partial scores
 * and some timeouts, as in bench_score. */
static void write_job_tail(tally_buf_t *b, int n) {
  bench_putf(b, "\"task\": \"bench\", \"participant\": \"user%03d\", ",
             n % 500);
  bench_write_evaluations(b, PER_SUBTASK, true);
  bench_putf(b, "}");
}

/* Job n is JOB_HEAD with n, then tail n % NDISTINCT. The bare cycle's
 * result for it is RESULT_HEAD with n, result tail n % NDISTINCT, then
 * the "id" member the worker adds: byte for byte what tallyd posts. */
#define JOB_HEAD "{\"submission\": \"s-%ld\", "

bench_corpus_t corpus;

/* With --contest P: the number of participants (0: the jobs as above).
 * Job n then names contest "bench", a participant drawn from P by a hash
 * of n, and timestamp n, so that each place (contest, participant, task)
 * gathers submissions in time order, about count / P of them in a run. */
static long contest_participants;

/* The participant of job n under --contest: a fixed hash of n, so that
 * every run sees the same draw. */
static long contest_participant(long n) {
  uint64_t x = (uint64_t)n + 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  x ^= x >> 31;
  return (long)(x % (uint64_t)contest_participants);
}

/* Appends job n's text to job: byte for byte the jobs of the default
 * runs, or with --contest the same evaluations after the contest members
 * above. */
static void write_job(tally_buf_t *job, long n) {
  int d = (int)(n % NDISTINCT);
  bench_putf(job, JOB_HEAD, n);
  if (contest_participants == 0) {
    tally_buf_put(job, corpus.job_tail[d], corpus.job_tail_len[d]);
    return;
  }
  bench_putf(job,
             "\"task\": \"bench\", \"contest\": \"bench\", "
             "\"participant\": \"p%05ld\", \"timestamp\": %ld, ",
             contest_participant(n), n);
  tally_buf_put(job, corpus.job_tail[d] + corpus.eval_off[d],
                corpus.job_tail_len[d] - corpus.eval_off[d]);
}

/* Builds the distinct jobs and, with the engine, their results. */
static void make_corpus(const char *task_text, size_t task_len) {
  tally_registry_t reg;
  tally_diag_t d;
  tally_task_t *task = NULL;
  tally_diag_init(&d, "bench.json");
  if (tally_registry_init(&reg) != 0 ||
      tally_task_parse(&reg, task_text, task_len, &d, &task) != 0)
    bench_die("the task: %s", d.count ? d.msgs[0] : "no memory");
  tally_diag_close(&d);
  tally_registry_close(&reg);
  tally_taskset_entry_t entry = {.task = task, .file = "bench.json"};
  tally_taskset_t tasks = {.entries = &entry, .count = 1};
  tally_engine_t e;
  tally_engine_init(&e, &tasks);

  tally_buf_t job, out;
  tally_buf_init(&job);
  tally_buf_init(&out);
  bench_rng_reset();
  double bytes = 0;
  for (int n = 0; n < NDISTINCT; n++) {
    tally_buf_t tail;
    tally_buf_init(&tail);
    write_job_tail(&tail, n);
    corpus.job_tail[n] = tail.data;
    corpus.job_tail_len[n] = tail.len;
    const char *ev = strstr(tail.data, "\"evaluations\"");
    if (ev == NULL)
      bench_die("job %d has no evaluations", n);
    corpus.eval_off[n] = (size_t)(ev - tail.data);

    tally_buf_reset(&job);
    write_job(&job, 100000l + n);
    bytes += (double)job.len;
    tally_buf_reset(&job);
    bench_putf(&job, JOB_HEAD, 100000l);
    tally_buf_put(&job, tail.data, tail.len);
    tally_buf_reset(&out);
    if (tally_engine_score(&e, job.data, job.len, NULL, &out) != 0)
      bench_die("job %d does not score: %s", n, e.err);
    char head[64];
    int hl = snprintf(head, sizeof(head), RESULT_HEAD, 100000l);
    if (out.len < (size_t)hl + 2 || memcmp(out.data, head, (size_t)hl) != 0)
      bench_die("the result of job %d does not start with %s", n, head);
    corpus.result_tail_len[n] = out.len - (size_t)hl - 1;
    corpus.result_tail[n] = malloc(corpus.result_tail_len[n]);
    if (corpus.result_tail[n] == NULL)
      bench_die("out of memory");
    memcpy(corpus.result_tail[n], out.data + hl, corpus.result_tail_len[n]);
  }
  corpus.job_bytes = bytes / NDISTINCT;
  tally_buf_close(&job);
  tally_buf_close(&out);
  tally_engine_close(&e);
  tally_task_free(task);
}

/* ---- Redis helpers ------------------------------------------------------ */

/* A stream entry ID. */
typedef struct sid_s {
  uint64_t ms, seq;
} sid_t;

static sid_t parse_sid(const char *s) {
  char *end;
  sid_t id = {strtoull(s, &end, 10), 0};
  if (*end == '-')
    id.seq = strtoull(end + 1, NULL, 10);
  return id;
}

static int cmp_sid(const sid_t *a, const sid_t *b) {
  if (a->ms != b->ms)
    return a->ms < b->ms ? -1 : 1;
  return (a->seq > b->seq) - (a->seq < b->seq);
}

/* ---- Per-process CPU time ----------------------------------------------- */

typedef struct cpu_s {
  double redis, consumer, workers, bench;
  double redis_wait, consumer_wait, workers_wait;
  unsigned nworkers;
  double busy, steal; /* the whole machine's, from /proc/stat */
} cpu_t;

/* Reads the CPU times of redis-server, the consumer (tallyd or the bare
 * cycle), the consumer's children (the workers) and this process (whose
 * threads come and go, so its time comes from /proc/self/stat). */
static cpu_t cpu_snapshot(pid_t consumer) {
  cpu_t c = {0};
  c.redis = bench_proc_sched_s(g.redis, &c.redis_wait);
  c.consumer = bench_proc_sched_s(consumer, &c.consumer_wait);
  c.bench = bench_proc_cpu_s(getpid(), NULL);
  DIR *dir = opendir("/proc");
  struct dirent *de;
  while (dir && (de = readdir(dir)) != NULL) {
    char *end;
    long pid = strtol(de->d_name, &end, 10);
    if (*end != '\0' || pid <= 0)
      continue;
    pid_t parent = 0;
    bench_proc_cpu_s((pid_t)pid, &parent);
    if (parent == consumer) {
      c.workers += bench_proc_sched_s((pid_t)pid, &c.workers_wait);
      c.nworkers++;
    }
  }
  if (dir)
    closedir(dir);
  bench_machine_cpu_s(&c.busy, &c.steal);
  return c;
}

/* ---- One run: a pusher and a follower ----------------------------------- */

typedef struct run_s {
  const char *sock;
  const char *prefix; /* "tally" for tallyd, "bare" for the bare cycle */
  long first;         /* the submission number of the first job */
  long count;
  long rate;        /* jobs per second, or 0 for as fast as possible */
  long tick_us;     /* with a rate: one pipelined batch per tick */
  char start[48];   /* the follower reads results after this ID */
  atomic_bool stop; /* set by whichever thread fails */

  /* The pusher's: each job's entry ID and the time it was sent. */
  sid_t *ids;
  int64_t *push_us;
  long pushed;
  double pusher_cpu;
  char push_err[256];

  /* The follower's: each result's job ID, its own ID's milliseconds (the
   * Redis clock when it was posted) and its arrival time. */
  sid_t *arr_ids;
  uint64_t *arr_posted_ms;
  int64_t *arr_us;
  int64_t realtime_off_us; /* CLOCK_REALTIME - CLOCK_MONOTONIC */
  long got;
  double result_bytes;
  double follower_cpu;
  char follow_err[256];
} run_t;

/* Sends XADDs for jobs [from, to) in one pipelined write, recording the
 * time just before the write and the IDs from the replies. */
static bool push_batch(run_t *r, redisContext *c, tally_buf_t *job, long from,
                       long to) {
  char key[64];
  snprintf(key, sizeof(key), "%s:jobs", r->prefix);
  for (long i = from; i < to; i++) {
    tally_buf_reset(job);
    write_job(job, r->first + i);
    const char *argv[] = {"XADD", key, "*", "job", job->data};
    size_t lens[] = {4, strlen(key), 1, 3, job->len};
    if (redisAppendCommandArgv(c, 5, argv, lens) != REDIS_OK) {
      snprintf(r->push_err, sizeof(r->push_err), "XADD: %s", c->errstr);
      return false;
    }
  }
  int64_t t = bench_now_us();
  for (long i = from; i < to; i++) {
    redisReply *reply;
    if (redisGetReply(c, (void **)&reply) != REDIS_OK ||
        reply->type != REDIS_REPLY_STRING) {
      snprintf(r->push_err, sizeof(r->push_err), "XADD: %s",
               reply ? reply->str : c->errstr);
      return false;
    }
    r->ids[i] = parse_sid(reply->str);
    r->push_us[i] = t;
    freeReplyObject(reply);
  }
  r->pushed = to;
  return true;
}

static void *pusher(void *arg) {
  run_t *r = arg;
  redisContext *c = bench_connect(r->sock);
  tally_buf_t job;
  tally_buf_init(&job);
  int64_t t0 = bench_now_us();
  for (long k = 0; r->pushed < r->count; k++) {
    if (atomic_load(&r->stop) || interrupted)
      break;
    long to = r->pushed + PUSH_CHUNK;
    if (r->rate > 0) {
      /* Tick k ends with rate * (k + 1) * tick jobs sent in all; a late
       * tick catches up. */
      int64_t due = t0 + k * r->tick_us;
      struct timespec ts = {(time_t)(due / 1000000),
                            (long)(due % 1000000) * 1000};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
      to = (long)((double)r->rate * (double)((k + 1) * r->tick_us) / 1e6);
    }
    if (to > r->count)
      to = r->count;
    if (to > r->pushed && !push_batch(r, c, &job, r->pushed, to)) {
      atomic_store(&r->stop, true);
      break;
    }
  }
  r->pusher_cpu = thread_cpu_s();
  tally_buf_close(&job);
  redisFree(c);
  return NULL;
}

/* The job ID in a result: its last member, "id". */
static bool result_job_id(const char *body, size_t len, sid_t *id) {
  static const char key[] = ",\"id\":\"";
  size_t kl = sizeof(key) - 1;
  for (size_t i = len > kl ? len - kl : 0; i-- > 0 && len - i < 96;) {
    if (memcmp(body + i, key, kl) == 0) {
      *id = parse_sid(body + i + kl);
      return true;
    }
  }
  return false;
}

/* The record key of a result, which starts with its submission. */
static bool record_key(const run_t *r, const char *body, size_t len, char *key,
                       size_t keylen) {
  static const char lead[] = "{\"submission\":\"";
  size_t n = sizeof(lead) - 1;
  if (len <= n || memcmp(body, lead, n) != 0)
    return false;
  const char *end = memchr(body + n, '"', len - n);
  if (end == NULL)
    return false;
  snprintf(key, keylen, "%s:submission:%.*s", r->prefix,
           (int)(end - body - (ptrdiff_t)n), body + n);
  return true;
}

/* The value of field name in a stream entry's fields, or NULL. */
static const redisReply *entry_field(const redisReply *f, const char *name) {
  for (size_t k = 0; k + 1 < f->elements; k += 2)
    if (f->element[k]->len == strlen(name) &&
        memcmp(f->element[k]->str, name, f->element[k]->len) == 0)
      return f->element[k + 1];
  return NULL;
}

/* Counts one result that arrived at t, entry e of the results stream,
 * with its body; false when the body names no job. */
static bool arrived(run_t *r, const redisReply *e, const char *body, size_t len,
                    int64_t t, char *record, size_t reclen) {
  sid_t id;
  if (!result_job_id(body, len, &id))
    return false;
  r->arr_ids[r->got] = id;
  r->arr_posted_ms[r->got] = parse_sid(e->element[0]->str).ms;
  r->arr_us[r->got] = t;
  r->got++;
  r->result_bytes += (double)len;
  return record_key(r, body, len, record, reclen);
}

/* Follows the results stream until every job's result has come, as a
 * platform does: tallyd's entries name the key of their result, which it
 * reads (one pipelined GET each); the bare cycle's hold the result. To
 * keep Redis's memory bounded, after each read it trims the results it
 * has read (XTRIM MINID) and deletes their submission records and
 * result keys. */
static void *follower(void *arg) {
  run_t *r = arg;
  redisContext *c = bench_connect(r->sock);
  char key[64], last[48];
  snprintf(key, sizeof(key), "%s:results", r->prefix);
  snprintf(last, sizeof(last), "%s", r->start);
  static char keys[2 * READ_COUNT][TALLY_RESULT_KEY_MAX];
  const char *argv[2 * READ_COUNT + 1];
  size_t lens[2 * READ_COUNT + 1];
  const redisReply *entry_of[READ_COUNT];
  int64_t last_arrival = bench_now_us();
  while (r->got < r->count) {
    if (atomic_load(&r->stop) || interrupted)
      break;
    redisReply *reply = redisCommand(
        c, "XREAD COUNT %d BLOCK 1000 STREAMS %s %s", READ_COUNT, key, last);
    int64_t t = bench_now_us();
    if (reply == NULL || reply->type == REDIS_REPLY_ERROR) {
      snprintf(r->follow_err, sizeof(r->follow_err), "XREAD: %s",
               reply ? reply->str : c->errstr);
      atomic_store(&r->stop, true);
      break;
    }
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) {
      freeReplyObject(reply);
      if (t - last_arrival > STALL_S * 1000000ll) {
        snprintf(r->follow_err, sizeof(r->follow_err),
                 "no result for %d s after %ld of %ld", STALL_S, r->got,
                 r->count);
        atomic_store(&r->stop, true);
        break;
      }
      continue;
    }
    last_arrival = t;
    const redisReply *entries = reply->element[0]->element[1];
    int nkeys = 0;
    argv[0] = "DEL";
    lens[0] = 3;
    int ngets = 0;
    for (size_t i = 0; i < entries->elements; i++) {
      const redisReply *e = entries->element[i];
      const redisReply *f = e->element[1];
      snprintf(last, sizeof(last), "%s", e->element[0]->str);
      if (r->got + ngets >= r->count)
        continue;
      const redisReply *key = entry_field(f, "body");
      const redisReply *body = entry_field(f, "result");
      if (key != NULL) {
        redisAppendCommand(c, "GET %b", key->str, key->len);
        snprintf(keys[nkeys], sizeof(keys[0]), "%s", key->str);
        argv[nkeys + 1] = keys[nkeys];
        lens[nkeys + 1] = key->len;
        nkeys++;
        entry_of[ngets++] = e;
      } else if (body != NULL && arrived(r, e, body->str, body->len, t,
                                         keys[nkeys], sizeof(keys[0]))) {
        argv[nkeys + 1] = keys[nkeys];
        lens[nkeys + 1] = strlen(keys[nkeys]);
        nkeys++;
      }
    }
    for (int g = 0; g < ngets; g++) {
      redisReply *v = NULL;
      if (redisGetReply(c, (void **)&v) != REDIS_OK ||
          v->type != REDIS_REPLY_STRING) {
        snprintf(r->follow_err, sizeof(r->follow_err), "GET of a result: %s",
                 v == NULL ? c->errstr : "the result's key is gone");
        atomic_store(&r->stop, true);
        freeReplyObject(v);
        break;
      }
      if (arrived(r, entry_of[g], v->str, v->len, t, keys[nkeys],
                  sizeof(keys[0]))) {
        argv[nkeys + 1] = keys[nkeys];
        lens[nkeys + 1] = strlen(keys[nkeys]);
        nkeys++;
      }
      freeReplyObject(v);
    }
    freeReplyObject(reply);
    if (atomic_load(&r->stop))
      break;
    redisAppendCommand(c, "XTRIM %s MINID %s", key, last);
    if (nkeys > 0)
      redisAppendCommandArgv(c, nkeys + 1, argv, lens);
    for (int k = 0; k < (nkeys > 0 ? 2 : 1); k++) {
      if (redisGetReply(c, (void **)&reply) != REDIS_OK) {
        snprintf(r->follow_err, sizeof(r->follow_err), "XTRIM/DEL: %s",
                 c->errstr);
        atomic_store(&r->stop, true);
        break;
      }
      freeReplyObject(reply);
    }
  }
  r->follower_cpu = thread_cpu_s();
  redisFree(c);
  return NULL;
}

/* ---- Figures ------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int cmp_sid_v(const void *a, const void *b) {
  return cmp_sid(a, b);
}

/* Milliseconds, with fewer decimals as they grow. */
static const char *fmt_ms(char *buf, size_t len, int64_t us) {
  double ms = (double)us / 1000.0;
  snprintf(buf, len,
           ms >= 100  ? "%.0f ms"
           : ms >= 10 ? "%.1f ms"
                      : "%.2f ms",
           ms);
  return buf;
}

/* The nearest-rank percentile q of the n sorted values v. */
static int64_t percentile(const int64_t *v, long n, double q) {
  long k = (long)((double)n * q + 0.999999);
  if (k < 1)
    k = 1;
  if (k > n)
    k = n;
  return v[k - 1];
}

/* The three stages of a job's latency, timed against the Redis clock
 * (stream IDs carry the milliseconds of CLOCK_REALTIME when they were
 * made): sent to added to the jobs stream, added to its result posted,
 * and posted to read by the follower. Each is good to about 1 ms. */
enum { STAGE_ENQUEUE, STAGE_TALLYD, STAGE_FOLLOW, NSTAGES };

typedef struct figures_s {
  double secs, rate, result_bytes;
  double posted_rate; /* to the last result posted, by the Redis clock */
  int64_t p50, p99, p999, max;
  int64_t stage_p50[NSTAGES], stage_p99[NSTAGES];
} figures_t;

/* Matches each result to its job and works out the figures. */
static figures_t figures(const run_t *r) {
  figures_t f = {0};
  int64_t *lat = malloc((size_t)r->got * sizeof(*lat));
  int64_t *stage[NSTAGES];
  for (int k = 0; k < NSTAGES; k++)
    stage[k] = malloc((size_t)r->got * sizeof(int64_t));
  if (lat == NULL || !stage[0] || !stage[1] || !stage[2])
    bench_die("out of memory");
  long n = 0;
  int64_t end = r->push_us[0];
  uint64_t posted_end = 0;
  for (long i = 0; i < r->got; i++) {
    const sid_t *hit = bsearch(&r->arr_ids[i], r->ids, (size_t)r->pushed,
                               sizeof(sid_t), cmp_sid_v);
    if (hit == NULL)
      bench_die("a result names job %llu-%llu, which this run did not push",
                (unsigned long long)r->arr_ids[i].ms,
                (unsigned long long)r->arr_ids[i].seq);
    int64_t sent = r->push_us[hit - r->ids] + r->realtime_off_us;
    int64_t added = (int64_t)hit->ms * 1000 + 500;
    int64_t posted = (int64_t)r->arr_posted_ms[i] * 1000 + 500;
    stage[STAGE_ENQUEUE][n] = added - sent;
    stage[STAGE_TALLYD][n] = posted - added;
    stage[STAGE_FOLLOW][n] = r->arr_us[i] + r->realtime_off_us - posted;
    lat[n++] = r->arr_us[i] - r->push_us[hit - r->ids];
    if (r->arr_us[i] > end)
      end = r->arr_us[i];
    if (r->arr_posted_ms[i] > posted_end)
      posted_end = r->arr_posted_ms[i];
  }
  qsort(lat, (size_t)n, sizeof(*lat), cmp_i64);
  f.secs = (double)(end - r->push_us[0]) / 1e6;
  f.rate = (double)r->got / f.secs;
  f.posted_rate = (double)r->got * 1e6 /
                  (double)((int64_t)posted_end * 1000 + 500 -
                           (r->push_us[0] + r->realtime_off_us));
  f.result_bytes = r->result_bytes / (double)r->got;
  f.p50 = percentile(lat, n, 0.50);
  f.p99 = percentile(lat, n, 0.99);
  f.p999 = percentile(lat, n, 0.999);
  f.max = lat[n - 1];
  free(lat);
  for (int k = 0; k < NSTAGES; k++) {
    qsort(stage[k], (size_t)n, sizeof(int64_t), cmp_i64);
    f.stage_p50[k] = percentile(stage[k], n, 0.50);
    f.stage_p99[k] = percentile(stage[k], n, 0.99);
    free(stage[k]);
  }
  return f;
}

/* Prints a run's line: what, its jobs per second, its latency. */
static void print_run(const char *what, const figures_t *f, long count) {
  char a[32], b[32], c[32], d[32];
  printf("%s: %ld jobs in %.2f s = %.0f jobs/s; latency p50 %s p99 %s "
         "p99.9 %s max %s\n",
         what, count, f->secs, f->rate, fmt_ms(a, sizeof(a), f->p50),
         fmt_ms(b, sizeof(b), f->p99), fmt_ms(c, sizeof(c), f->p999),
         fmt_ms(d, sizeof(d), f->max));
}

/* Prints where a run's time went: pushing, posting, the result size and
 * the latency stages. */
static void print_detail(const run_t *r, const figures_t *f,
                         const char *consumer) {
  static const char *const names[NSTAGES] = {
      "sent to queued", "queued to posted by", "posted to read"};
  char a[32], b[32];
  printf("  pushed in %.2f s; results posted at %.0f jobs/s (Redis clock); "
         "%.0f bytes of result JSON per job\n",
         (double)(r->push_us[r->count - 1] - r->push_us[0]) / 1e6,
         f->posted_rate, f->result_bytes);
  printf("  stages p50/p99 (Redis clock, +-1 ms):");
  for (int k = 0; k < NSTAGES; k++)
    printf("%s %s%s%s %s/%s", k ? "," : "", names[k],
           k == STAGE_TALLYD ? " " : "", k == STAGE_TALLYD ? consumer : "",
           fmt_ms(a, sizeof(a), f->stage_p50[k]),
           fmt_ms(b, sizeof(b), f->stage_p99[k]));
  printf("\n");
}

/* The CPU split of a run, as percent of one core: the time each process
 * ran, then in brackets the time it was ready to run but waited for a
 * CPU. */
static void print_cpu(const cpu_t *a, const cpu_t *b, const run_t *r,
                      double secs, const char *consumer) {
  double redis = b->redis - a->redis, cons = b->consumer - a->consumer;
  double workers = b->workers - a->workers, bench = b->bench - a->bench;
  double all = redis + cons + workers + bench;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  printf("  cpu, %% of one core over %.1f s (waiting for a CPU): "
         "redis-server %.0f (%.0f), %s %.0f (%.0f)",
         secs, 100 * redis / secs, 100 * (b->redis_wait - a->redis_wait) / secs,
         consumer, 100 * cons / secs,
         100 * (b->consumer_wait - a->consumer_wait) / secs);
  if (b->nworkers > 0)
    printf(", %u workers %.0f (%.0f)", b->nworkers, 100 * workers / secs,
           100 * (b->workers_wait - a->workers_wait) / secs);
  printf(", bench %.0f (pusher %.0f, follower %.0f); total %.0f of %ld\n",
         100 * bench / secs, 100 * r->pusher_cpu / secs,
         100 * r->follower_cpu / secs, 100 * all / secs, 100 * ncpu);
  double busy = b->busy - a->busy, other = busy - all;
  printf("  machine busy %.0f of %ld (other processes and kernel %.0f, "
         "steal %.0f)\n",
         100 * busy / secs, 100 * ncpu, other > 0 ? 100 * other / secs : 0.0,
         100 * (b->steal - a->steal) / secs);
}

/* Prints the commands that took Redis's time during a run, in
 * microseconds per job, from INFO commandstats (reset at the start of the
 * run). EVAL and EVALSHA include the commands their scripts run, which
 * are also counted under their own names. */
static void print_commands(redisContext *ctl, const cpu_t *a, const cpu_t *b,
                           long jobs) {
  redisReply *r = bench_command(ctl, "INFO commandstats");
  struct {
    char name[32];
    double usec;
  } cmd[64];
  int n = 0;
  for (const char *p = strstr(r->str, "cmdstat_"); p && n < 64;
       p = strstr(p + 1, "cmdstat_")) {
    const char *colon = strchr(p, ':'), *usec = strstr(p, "usec=");
    if (colon == NULL || usec == NULL)
      break;
    snprintf(cmd[n].name, sizeof(cmd[n].name), "%.*s", (int)(colon - p - 8),
             p + 8);
    cmd[n].usec = strtod(usec + 5, NULL);
    n++;
  }
  freeReplyObject(r);
  /* Largest first. */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && cmd[j].usec > cmd[j - 1].usec; j--) {
      __typeof__(cmd[0]) t = cmd[j];
      cmd[j] = cmd[j - 1];
      cmd[j - 1] = t;
    }
  printf("  redis-server, us per job: cpu %.1f; commands",
         (b->redis - a->redis) * 1e6 / (double)jobs);
  for (int i = 0; i < n; i++)
    if (cmd[i].usec / (double)jobs >= 0.05)
      printf(" %s %.1f", cmd[i].name, cmd[i].usec / (double)jobs);
  printf("\n");
}

/* The ID of the last entry of key, or "0-0". */
static void last_id(redisContext *c, const char *key, char *out, size_t len) {
  redisReply *r = bench_command(c, "XREVRANGE %s + - COUNT 1", key);
  snprintf(out, len, "%s",
           r->type == REDIS_REPLY_ARRAY && r->elements > 0
               ? r->element[0]->element[0]->str
               : "0-0");
  freeReplyObject(r);
}

static long next_submission = 100000;

/* Pushes count jobs to the consumer under prefix (at rate, or as fast as
 * possible) and follows their results; fills f and the CPU split. */
static void run(redisContext *ctl, const char *sock, const char *prefix,
                pid_t consumer, long count, long rate, long tick_us,
                figures_t *f, run_t **out, cpu_t *cpu0, cpu_t *cpu1) {
  run_t *r = calloc(1, sizeof(*r));
  if (r == NULL)
    bench_die("out of memory");
  r->sock = sock;
  r->prefix = prefix;
  r->first = next_submission;
  next_submission += count;
  r->count = count;
  r->rate = rate;
  r->tick_us = tick_us;
  r->ids = malloc((size_t)count * sizeof(*r->ids));
  r->push_us = malloc((size_t)count * sizeof(*r->push_us));
  r->arr_ids = malloc((size_t)count * sizeof(*r->arr_ids));
  r->arr_us = malloc((size_t)count * sizeof(*r->arr_us));
  r->arr_posted_ms = malloc((size_t)count * sizeof(*r->arr_posted_ms));
  if (!r->ids || !r->push_us || !r->arr_ids || !r->arr_us || !r->arr_posted_ms)
    bench_die("out of memory");
  char key[64];
  snprintf(key, sizeof(key), "%s:results", prefix);
  last_id(ctl, key, r->start, sizeof(r->start));

  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  r->realtime_off_us =
      (int64_t)rt.tv_sec * 1000000 + rt.tv_nsec / 1000 - bench_now_us();
  freeReplyObject(bench_command(ctl, "CONFIG RESETSTAT"));
  *cpu0 = cpu_snapshot(consumer);
  pthread_t tp, tf;
  if (pthread_create(&tf, NULL, follower, r) != 0 ||
      pthread_create(&tp, NULL, pusher, r) != 0)
    bench_die("cannot start threads");
  pthread_join(tp, NULL);
  pthread_join(tf, NULL);
  *cpu1 = cpu_snapshot(consumer);
  if (interrupted)
    bench_die("interrupted");
  if (r->push_err[0])
    bench_die("pusher: %s", r->push_err);
  if (r->follow_err[0])
    bench_die("follower: %s", r->follow_err);
  *f = figures(r);
  *out = r;
}

static void free_run(run_t *r) {
  free(r->ids);
  free(r->push_us);
  free(r->arr_ids);
  free(r->arr_us);
  free(r->arr_posted_ms);
  free(r);
}

/* Runs WARMUP_JOBS untimed jobs through the consumer, and checks that none
 * of them became a dead letter. */
static void warm_up(redisContext *ctl, const char *sock, const char *prefix,
                    pid_t consumer) {
  figures_t f;
  run_t *r;
  cpu_t a, b;
  run(ctl, sock, prefix, consumer, WARMUP_JOBS, 0, 0, &f, &r, &a, &b);
  free_run(r);
  if (bench_command_int(ctl, "EXISTS %s:dead", prefix) != 0)
    bench_die("%s:dead has dead letters: the jobs do not score", prefix);
}

/* ---- Main --------------------------------------------------------------- */

typedef struct opts_s {
  long jobs, rate, tick_ms, contest, sse, sse_nice;
  double seconds;
  unsigned workers, batch;
  unsigned bare_depth;
  bool aof, skip_bare, skip_steady, bare_plain;
  const char *tallyd, *redis_server;
} opts_t;

static const char usage[] =
    "usage: bench_tallyd [--jobs N] [--workers N] [--batch N] [--rate R]\n"
    "                    [--seconds S] [--tick-ms MS] [--aof] [--skip-bare]\n"
    "                    [--skip-steady] [--bare-depth N] [--bare-plain]\n"
    "                    [--contest P] [--sse N] [--sse-nice N]\n"
    "                    [--tallyd PATH] [--redis-server PATH]\n"
    "\n"
    "  --jobs N             jobs in the throughput runs (default 200000)\n"
    "  --workers N          tallyd --workers (default 2)\n"
    "  --batch N            tallyd --batch (default: tallyd's)\n"
    "  --rate R             jobs/s of the steady run (default 5000)\n"
    "  --seconds S          length of the steady run (default 10)\n"
    "  --tick-ms MS         the steady run sends a batch each MS (default "
    "10)\n"
    "  --aof                Redis with appendonly yes, appendfsync everysec\n"
    "  --skip-bare          no bare Redis cycle\n"
    "  --skip-steady        no steady-rate run\n"
    "  --bare-depth N       posts in flight in the bare cycle (default 4, as\n"
    "                       tallyd)\n"
    "  --bare-plain         the bare cycle posts with MULTI and plain\n"
    "                       commands, not a script\n"
    "  --contest P          jobs of contest \"bench\" from P participants\n"
    "                       (drawn by a hash of the job number), with\n"
    "                       increasing timestamps (default: the jobs of\n"
    "                       500 participants, all at timestamp 0)\n"
    "  --sse N              after the steady run, the same run again with N\n"
    "                       clients on the board's event stream: the\n"
    "                       posting latency with and without, and the\n"
    "                       events' delay\n"
    "  --sse-nice N         the clients' thread at nice N (default 0): 19\n"
    "                       stands for browsers on other machines, which\n"
    "                       take nothing from this one's CPUs\n"
    "  --tallyd PATH        default: tallyd beside this program\n"
    "  --redis-server PATH  default: redis-server on PATH\n";

static long long num_arg(int argc, char **argv, int *i, long long lo,
                         long long hi) {
  char *end;
  if (*i + 1 >= argc)
    goto bad;
  long long v = strtoll(argv[++*i], &end, 10);
  if (*end != '\0' || v < lo || v > hi)
    goto bad;
  return v;
bad:
  fprintf(stderr, "bench_tallyd: %s takes a whole number from %lld to %lld\n",
          argv[*i - (*i + 1 >= argc ? 0 : 1)], lo, hi);
  exit(2);
}

static void parse_opts(opts_t *o, int argc, char **argv) {
  *o = (opts_t){.jobs = 200000,
                .rate = 5000,
                .tick_ms = 10,
                .seconds = 10,
                .workers = 2,
                .bare_depth = 4};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--jobs") == 0)
      o->jobs = num_arg(argc, argv, &i, WARMUP_JOBS, 100000000);
    else if (strcmp(a, "--workers") == 0)
      o->workers = (unsigned)num_arg(argc, argv, &i, 1, 256);
    else if (strcmp(a, "--batch") == 0)
      o->batch = (unsigned)num_arg(argc, argv, &i, 1, 1024);
    else if (strcmp(a, "--rate") == 0)
      o->rate = num_arg(argc, argv, &i, 1, 10000000);
    else if (strcmp(a, "--seconds") == 0)
      o->seconds = (double)num_arg(argc, argv, &i, 1, 3600);
    else if (strcmp(a, "--tick-ms") == 0)
      o->tick_ms = num_arg(argc, argv, &i, 1, 1000);
    else if (strcmp(a, "--bare-depth") == 0)
      o->bare_depth = (unsigned)num_arg(argc, argv, &i, 1, 64);
    else if (strcmp(a, "--contest") == 0)
      o->contest = num_arg(argc, argv, &i, 1, 100000000);
    else if (strcmp(a, "--sse") == 0)
      o->sse = num_arg(argc, argv, &i, 1, 20000);
    else if (strcmp(a, "--sse-nice") == 0)
      o->sse_nice = num_arg(argc, argv, &i, 0, 19);
    else if (strcmp(a, "--bare-plain") == 0)
      o->bare_plain = true;
    else if (strcmp(a, "--aof") == 0)
      o->aof = true;
    else if (strcmp(a, "--skip-bare") == 0)
      o->skip_bare = true;
    else if (strcmp(a, "--skip-steady") == 0)
      o->skip_steady = true;
    else if (strcmp(a, "--tallyd") == 0 && i + 1 < argc)
      o->tallyd = argv[++i];
    else if (strcmp(a, "--redis-server") == 0 && i + 1 < argc)
      o->redis_server = argv[++i];
    else {
      fputs(usage, strcmp(a, "--help") == 0 ? stdout : stderr);
      exit(strcmp(a, "--help") == 0 ? 0 : 2);
    }
  }
}

/* tallyd beside this program, as tallyd finds tally-worker. */
static char *default_tallyd(void) {
  static char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 16);
  if (n <= 0)
    bench_die("cannot find this program: give --tallyd");
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  strcpy(slash ? slash + 1 : path, "tallyd");
  return path;
}

static void start_redis(const opts_t *o, const char *sock) {
  char log[PATH_MAX + 32];
  snprintf(log, sizeof(log), "%s/redis.log", bench_dir());
  const char *args[] = {"--port",
                        "0",
                        "--unixsocketperm",
                        "700",
                        "--dir",
                        bench_dir(),
                        "--save",
                        "",
                        "--appendonly",
                        o->aof ? "yes" : "no",
                        "--appendfsync",
                        "everysec",
                        NULL};
  g.redis = tr_redis_spawn(o->redis_server, sock, args, log);
  if (g.redis < 0) {
    g.redis = 0;
    bench_die("redis-server did not start");
  }
}

/* The port tallyd's HTTP listener gets: a free one, found at start. */
static int http_port;

static int free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET,
                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
      getsockname(fd, (struct sockaddr *)&a, &len) != 0)
    bench_die("cannot find a free port: %s", strerror(errno));
  close(fd);
  return ntohs(a.sin_port);
}

static void start_tallyd(const opts_t *o, redisContext *ctl, const char *url,
                         const char *tasks) {
  char workers[16], batch[16], http[32];
  snprintf(http, sizeof(http), "127.0.0.1:%d", http_port);
  snprintf(workers, sizeof(workers), "%u", o->workers);
  snprintf(batch, sizeof(batch), "%u", o->batch);
  char *argv[16] = {(char *)o->tallyd,
                    "--tasks",
                    (char *)tasks,
                    "--redis",
                    (char *)url,
                    "--workers",
                    workers,
                    "--consumer",
                    "bench",
                    "--log-level",
                    "warn",
                    "--http",
                    http};
  int argc = 13;
  if (o->batch > 0) {
    argv[argc++] = "--batch";
    argv[argc++] = batch;
  }
  argv[argc] = NULL;
  g.tallyd = bench_spawn(argv, "tallyd.log", "tallyd.log");
  for (int waited = 0;; waited += 20) {
    redisReply *r = redisCommand(ctl, "XINFO GROUPS tally:jobs");
    bool up = r && r->type == REDIS_REPLY_ARRAY && r->elements > 0;
    freeReplyObject(r);
    if (up)
      return;
    if (waitpid(g.tallyd, NULL, WNOHANG) == g.tallyd) {
      g.tallyd = 0;
      bench_die("tallyd exited at start");
    }
    if (waited > 10000 || interrupted)
      bench_die("tallyd did not create its group in 10 s");
    bench_sleep_ms(20);
  }
}

static double used_memory_peak_mb(redisContext *ctl) {
  redisReply *r = bench_command(ctl, "INFO memory");
  const char *p = strstr(r->str, "used_memory_peak:");
  double mb = p ? strtod(p + 17, NULL) / 1048576.0 : 0;
  freeReplyObject(r);
  return mb;
}

/* The steady run again with o->sse clients on the board's events. */
static void sse_run(const opts_t *o, redisContext *ctl, const char *sock,
                    long count, const figures_t *alone) {
  sse_clients_t s;
  const char *contest = o->contest > 0 ? "bench" : "default";
  if (sse_clients_start(&s, http_port, contest, (int)o->sse,
                        (int)o->sse_nice) != 0)
    bench_die("event streams: %s", s.err);
  for (int waited = 0; __atomic_load_n(&s.connected, __ATOMIC_RELAXED) < o->sse;
       waited += 20) {
    if (waited > 20000 || interrupted)
      bench_die("only %d of %ld event streams connected in 20 s", s.connected,
                o->sse);
    bench_sleep_ms(20);
  }
  s.recording = true;
  figures_t fs;
  run_t *r;
  cpu_t a, b;
  run(ctl, sock, "tally", g.tallyd, count, o->rate, o->tick_ms * 1000, &fs, &r,
      &a, &b);
  bench_sleep_ms(500); /* the last events on their way */
  sse_clients_stop(&s);
  char what[96], p50[32], p99[32];
  snprintf(what, sizeof(what), "steady %ld/s, %ld event streams", o->rate,
           o->sse);
  print_run(what, &fs, count);
  print_detail(r, &fs, "tallyd");
  print_cpu(&a, &b, r, fs.secs, "tallyd");
  free_run(r);
  printf("  posting latency with the streams / without: p50 %.2f, p99 %.2f\n",
         (double)fs.p50 / (double)alone->p50,
         (double)fs.p99 / (double)alone->p99);
  if (s.ndelays > 0) {
    qsort(s.delays_us, (size_t)s.ndelays, sizeof(int64_t), cmp_i64);
    printf("  events: %ld received (%.0f per stream), %.1f MB; delay from "
           "the event's entry to a client, p50 %s, p99 %s (Redis clock, +-1 "
           "ms)\n",
           s.ndelays, (double)s.ndelays / (double)o->sse, (double)s.bytes / 1e6,
           fmt_ms(p50, sizeof(p50), percentile(s.delays_us, s.ndelays, 0.5)),
           fmt_ms(p99, sizeof(p99), percentile(s.delays_us, s.ndelays, 0.99)));
  } else {
    printf("  events: none received\n");
  }
  sse_clients_free(&s);
}

int main(int argc, char **argv) {
  opts_t o;
  parse_opts(&o, argc, argv);
  if (o.tallyd == NULL)
    o.tallyd = default_tallyd();
  if (access(o.tallyd, X_OK) != 0)
    bench_die("%s: %s", o.tallyd, strerror(errno));
  setvbuf(stdout, NULL, _IOLBF, 0);

  bench_begin("bench_tallyd", stop_all);
  struct sigaction sa = {.sa_handler = on_interrupt};
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  char sock[PATH_MAX], url[PATH_MAX + 16], tasks[PATH_MAX], path[PATH_MAX + 16];
  snprintf(sock, sizeof(sock), "%s/redis.sock", bench_dir());
  snprintf(url, sizeof(url), "unix://%s", sock);
  snprintf(tasks, sizeof(tasks), "%s/tasks", bench_dir());
  snprintf(path, sizeof(path), "%s/bench.json", tasks);

  contest_participants = o.contest;
  tally_buf_t task;
  tally_buf_init(&task);
  bench_write_task(&task, PER_SUBTASK);
  FILE *f;
  if (mkdir(tasks, 0700) != 0 || (f = fopen(path, "w")) == NULL ||
      fwrite(task.data, 1, task.len, f) != task.len || fclose(f) != 0)
    bench_die("cannot write %s: %s", path, strerror(errno));
  make_corpus(task.data, task.len);
  tally_buf_close(&task);

  start_redis(&o, sock);
  redisContext *ctl = bench_connect(sock);
  redisReply *info = bench_command(ctl, "INFO server");
  const char *ver = strstr(info->str, "redis_version:");
  printf("bench_tallyd: %s, %u workers, batch %s; redis-server %.*s %s; "
         "%ld CPUs\n",
         o.tallyd, o.workers, o.batch ? "set" : "default",
         ver ? (int)strcspn(ver + 14, "\r\n") : 1, ver ? ver + 14 : "?",
         o.aof ? "with appendonly yes, appendfsync everysec"
               : "without persistence",
         sysconf(_SC_NPROCESSORS_ONLN));
  freeReplyObject(info);
  printf("jobs: GroupMin, %d testcases in %d subtasks, evaluations as "
         "objects; %.0f bytes of job JSON per job\n",
         BENCH_NSUBTASKS * PER_SUBTASK, BENCH_NSUBTASKS, corpus.job_bytes);
  if (o.contest > 0)
    printf("contest: %ld participants, a hash of the job number picks each "
           "job's; timestamps increase\n",
           o.contest);

  http_port = free_port();
  start_tallyd(&o, ctl, url, tasks);
  warm_up(ctl, sock, "tally", g.tallyd);

  figures_t ft, fb = {0}, fs;
  run_t *r;
  cpu_t a, b;
  run(ctl, sock, "tally", g.tallyd, o.jobs, 0, 0, &ft, &r, &a, &b);
  print_run("tallyd", &ft, o.jobs);
  print_detail(r, &ft, "tallyd");
  print_cpu(&a, &b, r, ft.secs, "tallyd");
  print_commands(ctl, &a, &b, o.jobs);
  free_run(r);

  if (!o.skip_steady) {
    long count = (long)((double)o.rate * o.seconds);
    run(ctl, sock, "tally", g.tallyd, count, o.rate, o.tick_ms * 1000, &fs, &r,
        &a, &b);
    char what[64];
    snprintf(what, sizeof(what), "steady %ld/s", o.rate);
    print_run(what, &fs, count);
    print_detail(r, &fs, "tallyd");
    printf("  a batch of %ld jobs every %ld ms\n", o.rate * o.tick_ms / 1000,
           o.tick_ms);
    print_cpu(&a, &b, r, fs.secs, "tallyd");
    print_commands(ctl, &a, &b, count);
    free_run(r);
    if (o.sse > 0)
      sse_run(&o, ctl, sock, count, &fs);
  }
  bench_stop(g.tallyd, SIGTERM, 15000);
  g.tallyd = 0;

  if (!o.skip_bare) {
    bench_command_int(ctl, "DEL bare:jobs");
    freeReplyObject(
        bench_command(ctl, "XGROUP CREATE bare:jobs tallyd $ MKSTREAM"));
    g.bare = fork();
    if (g.bare < 0)
      bench_die("fork: %s", strerror(errno));
    if (g.bare == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      bare_main(sock, o.bare_depth, o.bare_plain);
    }
    warm_up(ctl, sock, "bare", g.bare);
    run(ctl, sock, "bare", g.bare, o.jobs, 0, 0, &fb, &r, &a, &b);
    print_run(o.bare_plain ? "bare cycle, plain" : "bare cycle", &fb, o.jobs);
    print_detail(r, &fb, "bare");
    printf("  tallyd/bare = %.2f\n", ft.rate / fb.rate);
    print_cpu(&a, &b, r, fb.secs, "bare cycle");
    print_commands(ctl, &a, &b, o.jobs);
    free_run(r);
    bench_stop(g.bare, SIGTERM, 2000);
    g.bare = 0;
  }
  printf("redis-server: used_memory_peak %.0f MB\n", used_memory_peak_mb(ctl));
  redisFree(ctl);
  return 0;
}
