/* dlopen-based loading of plugins (score types, task types and
 * comparators), checked by ABI version. */
#include "engine/plugins.h"
#include "engine/plugin.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void tally_plugins_init(tally_plugins_t *p) {
  memset(p, 0, sizeof(*p));
}

void tally_plugins_close(tally_plugins_t *p) {
  for (size_t i = 0; i < p->count; i++)
    dlclose(p->handles[i]);
  free(p->handles);
  memset(p, 0, sizeof(*p));
}

static int host_register(tally_plugin_host_t *host,
                         const tally_score_type_t *type) {
  return tally_registry_add(host->data, type, host->err, host->errlen);
}

static int host_register_task_type(tally_plugin_host_t *host,
                                   const tally_task_type_t *type) {
  return tally_registry_add_task_type(host->data, type, host->err,
                                      host->errlen);
}

static int host_register_comparator(tally_plugin_host_t *host,
                                    const tally_comparator_t *cmp) {
  return tally_registry_add_comparator(host->data, cmp, host->err,
                                       host->errlen);
}

static int host_register_primitive(tally_plugin_host_t *host,
                                   const tally_primitive_t *prim) {
  return tally_registry_add_primitive(host->data, prim, host->err,
                                      host->errlen);
}

static int load_here(tally_plugins_t *p, tally_registry_t *reg,
                     const char *path, char *err, size_t errlen);

/* Loads path in a child process first (dlopen, the ABI check and the
 * entry point, into a registry of the child's own), so that a plugin that
 * crashes, exits or hangs while it loads is named, rather than taking the
 * caller down or silent with it. Returns 0 when the child came back (the
 * load itself may still fail, harmlessly, and is then reported by the
 * real one), or TALLY_EPLUGIN with err saying what the plugin did. */
static int probe(const char *path, char *err, size_t errlen) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    snprintf(err, errlen, "%s: cannot probe the plugin: %s", path,
             strerror(errno));
    return TALLY_EPLUGIN;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    snprintf(err, errlen, "%s: cannot probe the plugin: %s", path,
             strerror(errno));
    close(fds[0]);
    close(fds[1]);
    return TALLY_EPLUGIN;
  }
  if (pid == 0) {
    close(fds[0]);
    /* A crash is reported by its signal, not by a sanitizer's handler. */
    static const int crashes[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof(crashes) / sizeof(crashes[0]); i++)
      signal(crashes[i], SIG_DFL);
    tally_registry_t reg;
    tally_plugins_t p;
    char e[512];
    tally_plugins_init(&p);
    char done = tally_registry_init(&reg) == 0 &&
                        load_here(&p, &reg, path, e, sizeof(e)) == 0
                    ? 'o'
                    : 'e';
    if (write(fds[1], &done, 1) != 1)
      _exit(1);
    _exit(0);
  }
  close(fds[1]);
  struct pollfd pfd = {.fd = fds[0], .events = POLLIN};
  int ready;
  do
    ready = poll(&pfd, 1, TALLY_PLUGIN_PROBE_MS);
  while (ready < 0 && errno == EINTR);
  char done = 0;
  bool answered = ready > 0 && read(fds[0], &done, 1) == 1;
  close(fds[0]);
  if (ready == 0)
    kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (answered)
    return 0;
  if (ready == 0)
    snprintf(err, errlen,
             "%s: the plugin did not finish loading within %d ms (it hangs "
             "in tally_plugin_init or a constructor)",
             path, TALLY_PLUGIN_PROBE_MS);
  else if (WIFSIGNALED(status))
    snprintf(err, errlen,
             "%s: the plugin crashed while loading (signal %d, %s) in "
             "tally_plugin_init or a constructor",
             path, WTERMSIG(status), strsignal(WTERMSIG(status)));
  else
    snprintf(err, errlen,
             "%s: the plugin ended the process while loading (exit status "
             "%d) in tally_plugin_init or a constructor",
             path, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return TALLY_EPLUGIN;
}

int tally_plugins_load(tally_plugins_t *p, tally_registry_t *reg,
                       const char *path, char *err, size_t errlen) {
  int rc = probe(path, err, errlen);
  return rc != 0 ? rc : load_here(p, reg, path, err, errlen);
}

/* tally_plugins_load without the probe. */
static int load_here(tally_plugins_t *p, tally_registry_t *reg,
                     const char *path, char *err, size_t errlen) {
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    snprintf(err, errlen, "%s: cannot load plugin: %s", path, dlerror());
    return TALLY_EPLUGIN;
  }
  const int *abi = dlsym(h, "tally_plugin_abi");
  void *init_sym = dlsym(h, "tally_plugin_init");
  int (*init)(tally_plugin_host_t *);
  memcpy(&init, &init_sym, sizeof(init));
  if (abi == NULL || init == NULL) {
    snprintf(err, errlen,
             "%s: not a tally plugin: it must export tally_plugin_abi and "
             "tally_plugin_init",
             path);
    dlclose(h);
    return TALLY_EPLUGIN;
  }
  /* Older plugins see a prefix of this host, which they can use. */
  if (*abi < 1 || *abi > TALLY_PLUGIN_ABI) {
    snprintf(err, errlen,
             "%s: plugin ABI version %d, but tally expects 1 to %d", path, *abi,
             TALLY_PLUGIN_ABI);
    dlclose(h);
    return TALLY_EPLUGIN;
  }
  void **handles = realloc(p->handles, (p->count + 1) * sizeof(*handles));
  if (handles == NULL) {
    snprintf(err, errlen, "%s: out of memory", path);
    dlclose(h);
    return TALLY_ENOMEM;
  }
  p->handles = handles;

  char msg[256] = "";
  size_t before = reg->count, types_before = reg->ntask_types,
         comparators_before = reg->ncomparators,
         primitives_before = reg->nprimitives;
  tally_plugin_host_t host = {
      .abi = TALLY_PLUGIN_ABI,
      .register_score_type = host_register,
      .err = msg,
      .errlen = sizeof(msg),
      .data = reg,
      .register_task_type = host_register_task_type,
      .register_comparator = host_register_comparator,
      .register_primitive = host_register_primitive,
  };
  int rc = init(&host);
  if (rc != 0) {
    /* Forget what it registered before failing. */
    reg->count = before;
    reg->ntask_types = types_before;
    reg->ncomparators = comparators_before;
    reg->nprimitives = primitives_before;
    snprintf(err, errlen, "%s: plugin initialisation failed: %s", path,
             msg[0] ? msg : tally_strerror(rc));
    dlclose(h);
    return TALLY_EPLUGIN;
  }
  p->handles[p->count++] = h;
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int tally_plugins_load_dir(tally_plugins_t *p, tally_registry_t *reg,
                           const char *dir, char *err, size_t errlen) {
  DIR *d = opendir(dir);
  if (d == NULL) {
    snprintf(err, errlen, "%s: cannot open plugin folder: %s", dir,
             strerror(errno));
    return TALLY_EPLUGIN;
  }
  char **names = NULL;
  size_t n = 0;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
      continue;
    char **grown = realloc(names, (n + 1) * sizeof(*names));
    if (grown == NULL || (grown[n] = strdup(e->d_name)) == NULL) {
      names = grown ? grown : names;
      rc = TALLY_ENOMEM;
      snprintf(err, errlen, "%s: out of memory", dir);
      break;
    }
    names = grown;
    n++;
  }
  closedir(d);
  if (n > 1)
    qsort(names, n, sizeof(*names), cmp_names);
  for (size_t i = 0; i < n && rc == 0; i++) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    rc = tally_plugins_load(p, reg, path, err, errlen);
  }
  for (size_t i = 0; i < n; i++)
    free(names[i]);
  free(names);
  return rc;
}
