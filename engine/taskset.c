/* Task config loading from files and folders. */
#include "engine/taskset.h"
#include "engine/contests.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tally_taskset_init(tally_taskset_t *ts) {
  memset(ts, 0, sizeof(*ts));
}

void tally_taskset_close(tally_taskset_t *ts) {
  for (size_t i = 0; i < ts->count; i++) {
    tally_task_free(ts->entries[i].task);
    free(ts->entries[i].file);
  }
  free(ts->entries);
  memset(ts, 0, sizeof(*ts));
}

int tally_read_file(const char *path, char **text, size_t *len, char *err,
                    size_t errlen) {
  return tally_read_file_max(path, TALLY_DATA_FILE_MAX, text, len, err, errlen);
}

int tally_read_file_max(const char *path, size_t max, char **text, size_t *len,
                        char *err, size_t errlen) {
  *text = NULL;
  *len = 0;
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    if (fd >= 0)
      close(fd);
    return TALLY_EIO;
  }
  if (!S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file (%s)", path,
             S_ISDIR(st.st_mode)                          ? "a folder"
             : S_ISFIFO(st.st_mode)                       ? "a FIFO"
             : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                          : "a socket");
    close(fd);
    return TALLY_EINVAL;
  }
  if ((uint64_t)st.st_size > max) {
    snprintf(err, errlen, "%s: %lld bytes, more than the limit of %zu", path,
             (long long)st.st_size, max);
    close(fd);
    return TALLY_E2BIG;
  }
  /* Read up to one byte past the limit: a file that grew is caught. */
  size_t cap = (size_t)st.st_size + 1, used = 0;
  char *buf = malloc(cap + 1);
  int rc = buf == NULL ? TALLY_ENOMEM : 0;
  while (rc == 0) {
    ssize_t got = read(fd, buf + used, cap - used);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      snprintf(err, errlen, "%s: %s", path, strerror(errno));
      rc = TALLY_EIO;
    } else if (got == 0) {
      break;
    } else if ((used += (size_t)got) == cap) {
      if (used > max) {
        snprintf(err, errlen, "%s: more than the limit of %zu bytes", path,
                 max);
        rc = TALLY_E2BIG;
        break;
      }
      char *grown = realloc(buf, cap * 2 + 1);
      if (grown == NULL) {
        rc = TALLY_ENOMEM;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  close(fd);
  if (rc == 0 && used > max) {
    snprintf(err, errlen, "%s: more than the limit of %zu bytes", path, max);
    rc = TALLY_E2BIG;
  }
  if (rc == TALLY_ENOMEM)
    snprintf(err, errlen, "%s: out of memory", path);
  if (rc != 0) {
    free(buf);
    return rc;
  }
  buf[used] = '\0';
  *text = buf;
  *len = used;
  return 0;
}

/* 64-bit FNV-1a: its offset basis and prime. */
#define FNV_BASIS 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

int tally_config_version(const char *text, size_t len,
                         char version[TALLY_VERSION_LEN + 1]) {
  const char *end = NULL;
  version[0] = '\0';
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (root == NULL)
    return TALLY_EINVAL;
  char *compact = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (compact == NULL)
    return TALLY_ENOMEM;
  uint64_t h = FNV_BASIS;
  for (const unsigned char *p = (const unsigned char *)compact; *p; p++) {
    h ^= *p;
    h *= FNV_PRIME;
  }
  cJSON_free(compact);
  snprintf(version, TALLY_VERSION_LEN + 1, "%016" PRIx64, h);
  return 0;
}

/* The folder a task's data lives in, for the task file at path: data_dir
 * relative to the task file's folder (or as is, when absolute), or the
 * file name with .data in place of .json. malloc'ed; NULL when out of
 * memory. */
static char *data_folder(const tally_task_t *task, const char *path) {
  size_t plen = strlen(path);
  if (task->data_dir == NULL) {
    size_t base = plen;
    if (plen > 5 && strcmp(path + plen - 5, ".json") == 0)
      base -= 5;
    char *dir = malloc(base + 6);
    if (dir != NULL)
      snprintf(dir, base + 6, "%.*s.data", (int)base, path);
    return dir;
  }
  if (task->data_dir[0] == '/')
    return strdup(task->data_dir);
  const char *slash = strrchr(path, '/');
  size_t dlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
  size_t need = dlen + strlen(task->data_dir) + 1;
  char *dir = malloc(need);
  if (dir != NULL)
    snprintf(dir, need, "%.*s%s", (int)dlen, path, task->data_dir);
  return dir;
}

/* Whether codename can name a file in the data folder: no '/', and not
 * "." or "..". */
static bool file_name_ok(const char *codename) {
  return strchr(codename, '/') == NULL && strcmp(codename, ".") != 0 &&
         strcmp(codename, "..") != 0;
}

/* Reads the expected output of each testcase of task from dir into
 * task->expected. Every problem goes to d. */
static int load_outputs(tally_task_t *task, const char *dir, tally_diag_t *d) {
  task->expected = calloc(task->ntestcases, sizeof(*task->expected));
  if (task->expected == NULL)
    return tally_diag_add(d, NULL, "out of memory");
  int rc = 0;
  for (size_t i = 0; i < task->ntestcases; i++) {
    const char *codename = task->testcases[i].codename;
    if (!file_name_ok(codename)) {
      tally_jpath_t path;
      tally_jpath_init(&path);
      tally_jpath_key(&path, "testcases");
      tally_jpath_key(&path, codename);
      rc = tally_diag_add(d, &path,
                          "the codename of a task with expected outputs "
                          "names a file in %s, so it may not contain / or "
                          "be . or ..",
                          dir);
      continue;
    }
    size_t need = strlen(dir) + strlen(codename) + 6;
    char *file = malloc(need);
    if (file == NULL)
      return tally_diag_add(d, NULL, "out of memory");
    snprintf(file, need, "%s/%s.out", dir, codename);
    char err[512];
    tally_expected_t *e = &task->expected[i];
    if (tally_read_file(file, &e->data, &e->len, err, sizeof(err)) != 0)
      rc =
          tally_diag_add(d, NULL, "%s (the expected output of testcase \"%s\")",
                         err, codename);
    free(file);
  }
  return rc;
}

/* Loads the expected outputs of task, from the task file at path, for
 * task types that compare outputs (docs/tasktypes.md). Every problem goes
 * to d. */
static int load_expected(tally_task_t *task, const char *path,
                         tally_diag_t *d) {
  unsigned flags = task->task_type->flags;
  if (!(flags & (TALLY_TT_EXPECTED_REQUIRED | TALLY_TT_EXPECTED_OPTIONAL)) ||
      task->job_target != NULL)
    return 0; /* from_job.target: each job brings its own */
  char *dir = data_folder(task, path);
  if (dir == NULL)
    return tally_diag_add(d, NULL, "out of memory");
  struct stat sb;
  int rc = 0;
  tally_jpath_t at;
  tally_jpath_init(&at);
  if (task->data_dir != NULL)
    tally_jpath_key(&at, "data_dir");
  if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    const char *why = stat(dir, &sb) != 0 ? strerror(errno) : "not a folder";
    if (flags & TALLY_TT_EXPECTED_REQUIRED)
      rc = tally_diag_add(d, &at,
                          "%s: %s (a task of type %s needs a data folder "
                          "with an expected output per testcase)",
                          dir, why, task->task_type->name);
    else if (task->data_dir != NULL)
      rc = tally_diag_add(d, &at, "%s: %s", dir, why);
    else if (task->comparator_given)
      rc = tally_diag_add(d, NULL,
                          "%s: %s (the task names a comparator, so it "
                          "needs a data folder with an expected output per "
                          "testcase)",
                          dir, why);
  } else {
    rc = load_outputs(task, dir, d);
  }
  free(dir);
  return rc;
}

/* Folds the expected outputs of task into its version, so that changing
 * one changes the version as changing the config does. */
static void version_with_outputs(const tally_task_t *task,
                                 char version[TALLY_VERSION_LEN + 1]) {
  if (task->expected == NULL)
    return;
  uint64_t h = strtoull(version, NULL, 16);
  for (size_t i = 0; i < task->ntestcases; i++) {
    const tally_expected_t *e = &task->expected[i];
    /* The length first, so that moving bytes between outputs counts. */
    for (int k = 0; k < 8; k++) {
      h ^= (unsigned char)(e->len >> (8 * k));
      h *= FNV_PRIME;
    }
    for (size_t k = 0; k < e->len; k++) {
      h ^= (unsigned char)e->data[k];
      h *= FNV_PRIME;
    }
  }
  snprintf(version, TALLY_VERSION_LEN + 1, "%016" PRIx64, h);
}

/* Parses the task file at path and appends it to ts. */
static int load_one(tally_taskset_t *ts, const tally_registry_t *reg,
                    const char *path, tally_diag_t *d) {
  char *text;
  size_t len;
  char err[512];
  if (tally_read_file_max(path, TALLY_CONFIG_FILE_MAX, &text, &len, err,
                          sizeof(err)) != 0) {
    tally_diag_add(d, NULL, "%s", err);
    return TALLY_ECONFIG;
  }
  tally_diag_t fd;
  tally_diag_init(&fd, path);
  tally_task_t *task;
  char version[TALLY_VERSION_LEN + 1];
  int rc = tally_task_parse(reg, text, len, &fd, &task);
  if (rc == 0 && (rc = load_expected(task, path, &fd)) != 0) {
    tally_task_free(task);
    rc = TALLY_ECONFIG;
  }
  if (rc == 0 && tally_config_version(text, len, version) != 0) {
    /* The text parsed as a task, so it is JSON: only memory can fail. */
    tally_task_free(task);
    tally_diag_add(&fd, NULL, "out of memory");
    rc = TALLY_ENOMEM;
  }
  if (rc == 0)
    version_with_outputs(task, version);
  free(text);
  tally_diag_move(d, &fd);
  if (rc != 0)
    return rc;

  tally_taskset_entry_t *entries =
      realloc(ts->entries, (ts->count + 1) * sizeof(*entries));
  if (entries != NULL)
    ts->entries = entries;
  char *file = strdup(path);
  if (entries == NULL || file == NULL) {
    free(file);
    tally_task_free(task);
    tally_diag_add(d, NULL, "%s: out of memory", path);
    return TALLY_ENOMEM;
  }
  ts->entries[ts->count].task = task;
  ts->entries[ts->count].file = file;
  memcpy(ts->entries[ts->count].version, version, sizeof(version));
  ts->count++;
  return 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int tally_json_files(const char *dir, bool (*keep)(const char *name),
                     char ***paths, size_t *count, tally_diag_t *d) {
  *paths = NULL;
  *count = 0;
  DIR *dh = opendir(dir);
  if (dh == NULL) {
    tally_diag_add(d, NULL, "%s: %s", dir, strerror(errno));
    return TALLY_EIO;
  }
  char **names = NULL;
  size_t n = 0;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(dh)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || e->d_name[0] == '.' ||
        strcmp(e->d_name + len - 5, ".json") != 0 || !keep(e->d_name))
      continue;
    char **grown = realloc(names, (n + 1) * sizeof(*names));
    if (grown == NULL) {
      rc = TALLY_ENOMEM;
      break;
    }
    names = grown;
    size_t need = strlen(dir) + len + 2;
    if ((names[n] = malloc(need)) == NULL) {
      rc = TALLY_ENOMEM;
      break;
    }
    snprintf(names[n++], need, "%s/%s", dir, e->d_name);
  }
  closedir(dh);
  if (rc != 0) {
    tally_diag_add(d, NULL, "%s: out of memory", dir);
    tally_free_paths(names, n);
    return rc;
  }
  if (n > 1)
    qsort(names, n, sizeof(*names), cmp_str);
  *paths = names;
  *count = n;
  return 0;
}

void tally_free_paths(char **paths, size_t n) {
  for (size_t i = 0; i < n; i++)
    free(paths[i]);
  free(paths);
}

static bool is_task_file(const char *name) {
  return !tally_contest_file(name);
}

static int load_dir(tally_taskset_t *ts, const tally_registry_t *reg,
                    const char *dir, tally_diag_t *d) {
  char **names;
  size_t n;
  int rc = tally_json_files(dir, is_task_file, &names, &n, d);
  if (rc != 0)
    return rc;
  for (size_t i = 0; i < n && rc != TALLY_ENOMEM; i++) {
    int one = load_one(ts, reg, names[i], d);
    if (one != 0)
      rc = one;
  }
  tally_free_paths(names, n);
  if (rc == 0 && n == 0) {
    tally_diag_add(d, NULL, "%s: no task configs (*.json) in this folder", dir);
    rc = TALLY_ECONFIG;
  }
  return rc;
}

static int cmp_entry(const void *a, const void *b) {
  return strcmp(((const tally_taskset_entry_t *)a)->task->name,
                ((const tally_taskset_entry_t *)b)->task->name);
}

int tally_taskset_load(tally_taskset_t *ts, const tally_registry_t *reg,
                       const char *path, tally_diag_t *d) {
  struct stat sb;
  int rc;
  if (stat(path, &sb) != 0) {
    tally_diag_add(d, NULL, "%s: %s", path, strerror(errno));
    return TALLY_EIO;
  }
  if (S_ISDIR(sb.st_mode))
    rc = load_dir(ts, reg, path, d);
  else
    rc = load_one(ts, reg, path, d);

  if (ts->count > 1)
    qsort(ts->entries, ts->count, sizeof(*ts->entries), cmp_entry);
  for (size_t i = 1; i < ts->count; i++) {
    if (strcmp(ts->entries[i - 1].task->name, ts->entries[i].task->name) == 0) {
      tally_diag_add(d, NULL, "%s: task name \"%s\" is also used by %s",
                     ts->entries[i].file, ts->entries[i].task->name,
                     ts->entries[i - 1].file);
      rc = TALLY_ECONFIG;
    }
  }
  if (rc != 0)
    tally_taskset_close(ts);
  return rc;
}

/* The entry of the task called name, or NULL. */
static const tally_taskset_entry_t *find_entry(const tally_taskset_t *ts,
                                               const char *name) {
  size_t lo = 0, hi = ts->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = strcmp(ts->entries[mid].task->name, name);
    if (c == 0)
      return &ts->entries[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

const tally_task_t *tally_taskset_find(const tally_taskset_t *ts,
                                       const char *name) {
  const tally_taskset_entry_t *entry = find_entry(ts, name);
  return entry != NULL ? entry->task : NULL;
}

const char *tally_taskset_version(const tally_taskset_t *ts,
                                  const tally_task_t *task) {
  const tally_taskset_entry_t *entry = find_entry(ts, task->name);
  return entry != NULL && entry->task == task ? entry->version : NULL;
}
