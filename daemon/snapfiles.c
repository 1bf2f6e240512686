/* The files of tallyd's config snapshots (snapfiles.h). */
#include "daemon/snapfiles.h"

#include "config/error.h"
#include "engine/taskset.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tally_fmt(char *buf, size_t len, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, len, fmt, ap);
  va_end(ap);
  return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Removes the files and folders of dir and dir itself (a snapshot holds
 * task configs and the data folders of their expected outputs). */
void tally_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d != NULL) {
    struct dirent *e;
    char path[PATH_MAX];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      if (tally_fmt(path, sizeof(path), "%s/%s", dir, e->d_name) != 0)
        continue;
      if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
        tally_remove_dir(path);
      else
        unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* Copies the regular file from (at most max bytes) to to. */
int tally_copy_file(const char *from, const char *to, size_t max, char *err,
                    size_t errlen) {
  char *text;
  size_t len;
  int rc = tally_read_file_max(from, max, &text, &len, err, errlen);
  if (rc != 0)
    return rc;
  FILE *f = fopen(to, "wb");
  if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
    tally_fmt(err, errlen, "%s: cannot write: %s", to, strerror(errno));
    rc = TALLY_EIO;
  }
  free(text);
  return rc;
}

/* The data folder of the task file at path, relative to the file's
 * folder, into rel: its data_dir, or its name with .data for .json
 * (docs/tasktypes.md). */
static void data_rel(const char *path, char *rel, size_t len) {
  const char *base = strrchr(path, '/');
  base = base != NULL ? base + 1 : path;
  size_t n = strlen(base);
  if (n > 5 && strcmp(base + n - 5, ".json") == 0)
    n -= 5;
  tally_fmt(rel, len, "%.*s.data", (int)n, base);
  char *text, err[256];
  size_t tlen;
  if (tally_read_file_max(path, TALLY_CONFIG_FILE_MAX, &text, &tlen, err,
                          sizeof(err)) != 0)
    return;
  cJSON *root = cJSON_ParseWithLength(text, tlen);
  const cJSON *dd = cJSON_GetObjectItemCaseSensitive(root, "data_dir");
  if (cJSON_IsString(dd) && dd->valuestring[0] != '\0')
    tally_fmt(rel, len, "%s", dd->valuestring);
  cJSON_Delete(root);
  free(text);
}

/* Copies the data folder of the task file from (its files, one level)
 * into the same place relative to the snapshot folder dest, making the
 * folders on the way. A task without one, or with a data_dir the task
 * decoder refuses, copies nothing: checking the snapshot reports it. */
int tally_copy_data(const char *from, const char *dest, char *err,
                    size_t errlen) {
  char rel[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
  data_rel(from, rel, sizeof(rel));
  if (rel[0] == '/' || strcmp(rel, "..") == 0 || strncmp(rel, "../", 3) == 0 ||
      strstr(rel, "/../") != NULL)
    return 0;
  const char *slash = strrchr(from, '/');
  int dlen = slash != NULL ? (int)(slash - from) + 1 : 0;
  if (tally_fmt(src, sizeof(src), "%.*s%s", dlen, from, rel) ||
      tally_fmt(dst, sizeof(dst), "%s/%s", dest, rel)) {
    tally_fmt(err, errlen, "%s: path too long", from);
    return TALLY_EINVAL;
  }
  DIR *d = opendir(src);
  if (d == NULL)
    return 0;
  int rc = 0;
  /* Each folder on the way, then dst itself. */
  for (char *p = dst + strlen(dest) + 1; rc == 0; p++) {
    if (*p != '/' && *p != '\0')
      continue;
    char c = *p;
    *p = '\0';
    if (mkdir(dst, 0700) != 0 && errno != EEXIST) {
      tally_fmt(err, errlen, "%s: %s", dst, strerror(errno));
      rc = TALLY_EIO;
    }
    *p = c;
    if (c == '\0')
      break;
  }
  struct dirent *e;
  struct stat st;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    char in[PATH_MAX], out[PATH_MAX];
    if (tally_fmt(in, sizeof(in), "%s/%s", src, e->d_name) ||
        tally_fmt(out, sizeof(out), "%s/%s", dst, e->d_name)) {
      tally_fmt(err, errlen, "%s: path too long", e->d_name);
      rc = TALLY_EINVAL;
    } else if (stat(in, &st) == 0 && S_ISREG(st.st_mode)) {
      rc = tally_copy_file(in, out, TALLY_DATA_FILE_MAX, err, errlen);
    }
  }
  closedir(d);
  return rc;
}

bool tally_is_json_name(const char *name) {
  size_t n = strlen(name);
  return n > 5 && strcmp(name + n - 5, ".json") == 0 && name[0] != '.';
}

/* Removes the snapshot folders that tallyds killed with SIGKILL left in
 * tmp: "tallyd-PID-XXXXXX" whose PID is no longer running. */
void tally_remove_stale_snapshots(const char *tmp) {
  DIR *d = opendir(tmp);
  if (d == NULL)
    return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    int pid;
    char rest;
    if (sscanf(e->d_name, "tallyd-%d-%c", &pid, &rest) != 2 || pid <= 0)
      continue;
    if (kill(pid, 0) == 0 || errno != ESRCH)
      continue; /* running, or not ours to judge */
    char root[PATH_MAX], sub[PATH_MAX];
    if (tally_fmt(root, sizeof(root), "%s/%s", tmp, e->d_name) != 0)
      continue;
    DIR *r = opendir(root);
    struct dirent *f;
    while (r != NULL && (f = readdir(r)) != NULL)
      if (strncmp(f->d_name, "tasks-", 6) == 0 &&
          tally_fmt(sub, sizeof(sub), "%s/%s", root, f->d_name) == 0)
        tally_remove_dir(sub);
    if (r != NULL)
      closedir(r);
    rmdir(root);
  }
  closedir(d);
}

/* Copies the *.json files of --contests (contests) into the snapshot folder
 * dir, where the workers find contests beside their tasks: each as
 * NAME.contest.json, participants.json as it is. A file the tasks folder
 * gave already is an error. */
int tally_snapshot_contests(const char *contests, const char *dir, char *err,
                            size_t errlen) {
  DIR *d = opendir(contests);
  if (d == NULL) {
    tally_fmt(err, errlen, "--contests %s: %s", contests, strerror(errno));
    return TALLY_EIO;
  }
  int rc = 0;
  struct dirent *e;
  while (rc == 0 && (e = readdir(d)) != NULL) {
    if (!tally_is_json_name(e->d_name))
      continue;
    size_t n = strlen(e->d_name);
    bool keep = strcmp(e->d_name, "participants.json") == 0 ||
                (n > 13 && strcmp(e->d_name + n - 13, ".contest.json") == 0);
    char from[PATH_MAX], to[PATH_MAX];
    struct stat st;
    if (tally_fmt(from, sizeof(from), "%s/%s", contests, e->d_name) ||
        (keep ? tally_fmt(to, sizeof(to), "%s/%s", dir, e->d_name)
              : tally_fmt(to, sizeof(to), "%s/%.*s.contest.json", dir,
                          (int)(n - 5), e->d_name))) {
      tally_fmt(err, errlen, "%s: path too long", e->d_name);
      rc = TALLY_EINVAL;
    } else if (stat(to, &st) == 0) {
      tally_fmt(err, errlen,
                "%s: the tasks folder has a file of the same name (%s)", from,
                strrchr(to, '/') + 1);
      rc = TALLY_EINVAL;
    } else {
      rc = tally_copy_file(from, to, TALLY_CONFIG_FILE_MAX, err, errlen);
    }
  }
  closedir(d);
  return rc;
}
