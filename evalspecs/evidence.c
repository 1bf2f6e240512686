/* Gathering a run's evidence from its ordered events and challenge inputs,
 * as the reference reads them: a payload that is not an object reads as
 * an empty one; of a key given twice, the last counts. */
#include "evalspecs/evidence.h"
#include "config/error.h"
#include "evalspecs/gojson.h"
#include "evalspecs/gostr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *str_value(const cJSON *payload, const char *key) {
  const cJSON *v = tally_go_member(payload, key);
  return v != NULL ? tally_go_loose_string(v) : NULL;
}

static bool num_value(const cJSON *payload, const char *key, double *out) {
  const cJSON *v = tally_go_member(payload, key);
  if (!cJSON_IsNumber(v))
    return false;
  *out = v->valuedouble;
  return true;
}

/* The error a tool result's content holds: its "error" when the content
 * is a JSON object with one, else the content; trimmed, "" when none. */
static char *tool_error(const cJSON *result) {
  const cJSON *content =
      cJSON_IsObject(result) ? tally_go_member(result, "content") : NULL;
  const char *text = content != NULL ? tally_go_loose_string(content) : NULL;
  if (text == NULL)
    return strdup("");
  cJSON *decoded = NULL;
  char err[64];
  if (tally_go_unmarshal_check(text, err, sizeof(err)))
    decoded = cJSON_Parse(text);
  const cJSON *e =
      cJSON_IsObject(decoded) ? tally_go_member(decoded, "error") : NULL;
  const char *msg = e != NULL ? tally_go_loose_string(e) : NULL;
  char *out = tally_go_trimmed(msg != NULL ? msg : text);
  cJSON_Delete(decoded);
  return out;
}

/* Go's int(x) of a float64, for the indexes the reference reads. */
static int64_t to_int(double x) {
  if (!(x > -9.2e18 && x < 9.2e18))
    return INT64_MIN;
  return (int64_t)x;
}

static bool usage_value(const cJSON *payload, const char *key, double *out) {
  const cJSON *u = tally_go_member(payload, "usage");
  return cJSON_IsObject(u) && num_value(u, key, out);
}

static tally_es_ref_t ref_of(const tally_es_event_t *e) {
  tally_es_ref_t r = {e->seq > 0, e->seq, e->type};
  return r;
}

static void set_num(tally_es_num_t *n, double v) {
  n->set = true;
  n->v = v;
}

/* A model's usage, found or added (provider, model). */
static tally_es_usage_t *usage_of(tally_es_usage_t **list, size_t *n,
                                  size_t *cap, const char *provider,
                                  const char *model) {
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*list)[i].provider, provider) == 0 &&
        strcmp((*list)[i].model, model) == 0)
      return &(*list)[i];
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 4;
    tally_es_usage_t *l = realloc(*list, c * sizeof(*l));
    if (l == NULL)
      return NULL;
    *list = l;
    *cap = c;
  }
  tally_es_usage_t *u = &(*list)[(*n)++];
  memset(u, 0, sizeof(*u));
  u->provider = provider;
  u->model = model;
  return u;
}

static int cmp_usage(const void *pa, const void *pb) {
  const tally_es_usage_t *a = pa, *b = pb;
  int c = strcmp(a->provider, b->provider);
  return c != 0 ? c : strcmp(a->model, b->model);
}

/* The challenge input's value: the loose string of the payload, else its
 * compact JSON text. Sets the warnings of a missing or ambiguous input. */
static int challenge_input(tally_es_evidence_t *ev, const tally_es_run_t *run) {
  if (run->ninputs == 0) {
    ev->warnings[ev->nwarnings++] = "challenge input set is unavailable";
    return 0;
  }
  if (run->ninputs > 1) {
    ev->warnings[ev->nwarnings++] =
        "challenge input is ambiguous across multiple items";
    return 0;
  }
  const tally_es_input_t *in = &run->inputs[0];
  ev->challenge_id =
      tally_es_uuid_nil(&in->challenge_id) ? NULL : &in->challenge_id;
  ev->case_id = in->has_case_id ? &in->case_id : NULL;
  if (in->payload == NULL) {
    ev->warnings[ev->nwarnings++] = "challenge input payload is empty";
    return 0;
  }
  const char *s = tally_go_loose_string(in->payload);
  if (s != NULL) {
    ev->challenge_input = strdup(s);
  } else {
    /* The payload as the job wrote it (else its compact JSON text). */
    ev->challenge_input = run->payload_raw != NULL
                              ? strdup(run->payload_raw)
                              : cJSON_PrintUnformatted(in->payload);
  }
  return ev->challenge_input == NULL ? TALLY_ENOMEM : 0;
}

static bool add_capture(tally_es_evidence_t *ev, size_t *cap, const char *key,
                        bool listing, const cJSON *payload,
                        const tally_es_event_t *e) {
  for (size_t i = 0; i < ev->ncaptures; i++)
    if (ev->captures[i].listing == listing &&
        strcmp(ev->captures[i].key, key) == 0) {
      ev->captures[i].payload = payload;
      if (e->seq > 0)
        ev->captures[i].src = ref_of(e);
      return true;
    }
  if (ev->ncaptures == *cap) {
    size_t c = *cap ? *cap * 2 : 4;
    tally_es_capture_t *l = realloc(ev->captures, c * sizeof(*l));
    if (l == NULL)
      return false;
    ev->captures = l;
    *cap = c;
  }
  tally_es_capture_t *k = &ev->captures[ev->ncaptures++];
  k->key = key;
  k->listing = listing;
  k->payload = payload;
  k->src = e->seq > 0 ? ref_of(e) : (tally_es_ref_t){false, 0, NULL};
  return true;
}

/* A file capture event decodes as the reference's struct only when each
 * field it has is of its type. */
static bool capture_ok(const cJSON *p, bool listing) {
  if (!cJSON_IsObject(p))
    return false;
  static const char *const strs[] = {"key", "path", "content"};
  for (size_t i = 0; i < (listing ? 2u : 3u); i++) {
    const cJSON *v = tally_go_member(p, strs[i]);
    if (v != NULL && !cJSON_IsString(v) && !cJSON_IsNull(v))
      return false;
  }
  if (!listing) {
    const cJSON *v = tally_go_member(p, "exists"),
                *t = tally_go_member(p, "truncated"),
                *z = tally_go_member(p, "size");
    if ((v && !cJSON_IsBool(v) && !cJSON_IsNull(v)) ||
        (t && !cJSON_IsBool(t) && !cJSON_IsNull(t)) ||
        (z && !cJSON_IsNumber(z) && !cJSON_IsNull(z)))
      return false;
  } else {
    const cJSON *en = tally_go_member(p, "entries");
    if (en != NULL && !cJSON_IsArray(en) && !cJSON_IsNull(en))
      return false;
  }
  const char *key = str_value(p, "key");
  return cJSON_IsString(tally_go_member(p, "key")) && key[0] != '\0';
}

static int cmp_turn(const void *pa, const void *pb) {
  const tally_es_turn_t *a = pa, *b = pb;
  return (a->index > b->index) - (a->index < b->index);
}

static int cmp_time(tally_es_time_t a, tally_es_time_t b) {
  if (a.sec != b.sec)
    return a.sec < b.sec ? -1 : 1;
  return (a.nsec > b.nsec) - (a.nsec < b.nsec);
}

/* The transcript's events in its own order: by sequence number when both
 * have one, else by time (a stable insertion sort, as Go's). */
static int transcript(tally_es_evidence_t *ev, const tally_es_run_t *run) {
  size_t n = run->nevents;
  const tally_es_event_t **order = calloc(n + 1, sizeof(*order));
  if (order == NULL)
    return TALLY_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const tally_es_event_t *e = &run->events[i];
    size_t j = i;
    while (j > 0) {
      const tally_es_event_t *p = order[j - 1];
      bool before = e->seq > 0 && p->seq > 0 ? e->seq < p->seq
                                             : cmp_time(e->at, p->at) < 0;
      if (!before)
        break;
      order[j] = order[j - 1];
      j--;
    }
    order[j] = e;
  }
  size_t cap = 0;
  for (size_t i = 0; i < n; i++) {
    const cJSON *p = order[i]->payload;
    double x;
    if (!num_value(p, "turn_index", &x))
      continue;
    int64_t idx = to_int(x);
    tally_es_turn_t *t = NULL;
    for (size_t k = 0; k < ev->nturns && t == NULL; k++)
      if (ev->turns[k].index == idx)
        t = &ev->turns[k];
    if (t == NULL) {
      if (ev->nturns == cap) {
        size_t c = cap ? cap * 2 : 8;
        tally_es_turn_t *l = realloc(ev->turns, c * sizeof(*l));
        if (l == NULL) {
          free(order);
          return TALLY_ENOMEM;
        }
        ev->turns = l;
        cap = c;
      }
      t = &ev->turns[ev->nturns++];
      *t = (tally_es_turn_t){idx, "", "", "", "", false};
    }
    const char *s;
    if ((s = str_value(p, "phase_id")) != NULL)
      t->phase = s;
    const char *type = order[i]->type;
    if (strcmp(type, "turn.user.message") == 0) {
      if ((s = str_value(p, "content")) != NULL)
        t->user = s;
      if ((s = str_value(p, "actor")) != NULL)
        t->actor = s;
    } else if (strcmp(type, "turn.assistant.message") == 0) {
      if ((s = str_value(p, "content")) != NULL)
        t->assistant = s;
    } else if (strcmp(type, "turn.completed") == 0) {
      const cJSON *m = tally_go_member(p, "mismatch");
      if (cJSON_IsBool(m))
        t->mismatch = cJSON_IsTrue(m);
      if ((s = str_value(p, "actor")) != NULL && t->actor[0] == '\0')
        t->actor = s;
    }
  }
  free(order);
  if (ev->nturns > 1)
    qsort(ev->turns, ev->nturns, sizeof(*ev->turns), cmp_turn);
  return 0;
}

int tally_es_evidence_build(tally_es_evidence_t *ev,
                            const tally_es_run_t *run) {
  memset(ev, 0, sizeof(*ev));
  ev->run = run;
  ev->completed = -1;
  int rc = challenge_input(ev, run);
  if (rc != 0)
    return rc;
  if (run->ninputs == 1)
    ev->case_input = &run->inputs[0];
  else
    ev->case_reason = run->ninputs == 0
                          ? "case evidence is unavailable"
                          : "case evidence is ambiguous across multiple cases";
  double in_calls = 0, out_calls = 0, total_calls = 0;
  bool from_calls = false;
  size_t ucap = 0, mcap = 0, scap = 0, ccap = 0, tcap = 0;
  /* Steps started, by index: the last start of each. */
  typedef struct {
    int64_t index;
    tally_es_time_t at;
  } start_t;
  start_t *starts = NULL;
  size_t nstarts = 0;
  for (size_t i = 0; i < run->nevents && rc == 0; i++) {
    const tally_es_event_t *e = &run->events[i];
    const cJSON *p = cJSON_IsObject(e->payload) ? e->payload : NULL;
    const char *t = e->type;
    double x;
    const char *s;
    if (strcmp(t, "system.run.started") == 0) {
      if (!ev->has_started) {
        ev->has_started = true;
        ev->started = e->at;
      }
    } else if (strcmp(t, "system.step.started") == 0) {
      if (num_value(p, "step_index", &x)) {
        int64_t idx = to_int(x);
        size_t k = 0;
        while (k < nstarts && starts[k].index != idx)
          k++;
        if (k == nstarts) {
          start_t *l = realloc(starts, (nstarts + 1) * sizeof(*l));
          if (l == NULL) {
            rc = TALLY_ENOMEM;
            break;
          }
          starts = l;
          nstarts++;
        }
        starts[k].index = idx;
        starts[k].at = e->at;
      }
    } else if (strcmp(t, "system.step.completed") == 0) {
      if (!num_value(p, "step_index", &x))
        continue;
      int64_t idx = to_int(x);
      size_t k = 0;
      while (k < nstarts && starts[k].index != idx)
        k++;
      if (k == nstarts)
        continue;
      if (ev->nsteps == scap) {
        size_t c = scap ? scap * 2 : 8;
        tally_es_step_ev_t *l = realloc(ev->steps, c * sizeof(*l));
        if (l == NULL) {
          rc = TALLY_ENOMEM;
          break;
        }
        ev->steps = l;
        scap = c;
      }
      tally_es_step_ev_t *st = &ev->steps[ev->nsteps++];
      st->index = idx;
      st->started = starts[k].at;
      st->completed = e->at;
      st->ms = (double)tally_es_ms_between(e->at, starts[k].at);
    } else if (strcmp(t, "model.output.delta") == 0 ||
               strcmp(t, "system.output.finalized") == 0) {
      if (!ev->has_first_output) {
        ev->has_first_output = true;
        ev->first_output = e->at;
      }
      if (t[0] == 's' && ev->final_output == NULL) {
        s = str_value(p, "final_output");
        if (s == NULL) {
          const cJSON *o = tally_go_member(p, "output");
          s = o != NULL ? tally_go_loose_string(o) : NULL;
        }
        if (s != NULL) {
          ev->final_output = s;
          ev->final_src = ref_of(e);
        }
      }
    } else if (strcmp(t, "system.run.completed") == 0) {
      ev->has_terminal = true;
      ev->terminal = e->at;
      ev->completed = 1;
      if ((s = str_value(p, "final_output")) != NULL)
        ev->final_output = s;
      static const char *const keys[] = {"input_tokens", "output_tokens",
                                         "total_tokens"};
      tally_es_num_t *dst[] = {&ev->input_tokens, &ev->output_tokens,
                               &ev->total_tokens};
      for (int k = 0; k < 3; k++)
        if (num_value(p, keys[k], &x))
          set_num(dst[k], x);
      if (num_value(p, "tool_call_count", &x))
        set_num(&ev->tool_calls, x);
      for (int k = 0; k < 3; k++)
        if (usage_value(p, keys[k], &x) && !dst[k]->set)
          set_num(dst[k], x);
      if (num_value(p, "latency_ms", &x) && ev->has_started) {
        /* started + time.Duration(x) * time.Millisecond */
        int64_t ms = to_int(x);
        ev->terminal = ev->started;
        ev->terminal.sec += ms / 1000;
        int64_t ns = (int64_t)ev->terminal.nsec + (ms % 1000) * 1000000;
        if (ns < 0) {
          ns += 1000000000;
          ev->terminal.sec--;
        } else if (ns >= 1000000000) {
          ns -= 1000000000;
          ev->terminal.sec++;
        }
        ev->terminal.nsec = (int32_t)ns;
      }
    } else if (strcmp(t, "system.run.failed") == 0) {
      ev->has_terminal = true;
      ev->terminal = e->at;
      ev->completed = 0;
      ev->failures++;
    } else if (strcmp(t, "tool.call.completed") == 0 ||
               strcmp(t, "tool.call.failed") == 0) {
      s = str_value(p, "tool_name");
      bool failed = t[10] == 'f';
      if (s != NULL && !tally_go_blank(s)) {
        const cJSON *res = tally_go_member(p, "result");
        const cJSON *is_error =
            cJSON_IsObject(res) ? tally_go_member(res, "is_error") : NULL;
        if (cJSON_IsBool(is_error))
          failed = cJSON_IsTrue(is_error) || failed;
        if (ev->tool_calls_traced == tcap) {
          size_t cap = tcap ? tcap * 2 : 16;
          tally_es_call_t *grown = realloc(ev->calls, cap * sizeof(*grown));
          if (grown == NULL) {
            rc = TALLY_ENOMEM;
            break;
          }
          ev->calls = grown;
          tcap = cap;
        }
        tally_es_call_t *call = &ev->calls[ev->tool_calls_traced];
        const cJSON *args = tally_go_member(p, "arguments");
        call->tool = tally_go_trimmed(s);
        call->args =
            args != NULL ? cJSON_Duplicate(args, true) : cJSON_CreateObject();
        call->failed = failed;
        call->seq = e->seq;
        call->event_type = t;
        const char *origin = str_value(p, "failure_origin");
        call->origin = tally_go_trimmed(origin != NULL ? origin : "");
        call->error = tool_error(res);
        ev->tool_calls_traced++;
        if (call->tool == NULL || call->args == NULL || call->origin == NULL ||
            call->error == NULL) {
          rc = TALLY_ENOMEM;
          break;
        }
        if (failed)
          ev->failures++;
      } else if (failed) {
        ev->failures++;
      }
    } else if (strcmp(t, "sandbox.command.failed") == 0) {
      ev->failures++;
    } else if (strcmp(t, "model.call.completed") == 0 ||
               strcmp(t, "model.call.started") == 0) {
      bool done = t[11] == 'c';
      if (done && e->seq > 0)
        ev->last_model_call = ref_of(e);
      const char *provider = str_value(p, "provider_key");
      const char *first = done ? "provider_model_id" : "model";
      const char *second = done ? "model" : "provider_model_id";
      const char *model = str_value(p, first);
      if (model == NULL || model[0] == '\0')
        model = str_value(p, second);
      provider = provider ? provider : "";
      model = model ? model : "";
      if ((provider[0] != '\0' || model[0] != '\0') &&
          usage_of(&ev->models, &ev->nmodels, &mcap, provider, model) == NULL)
        rc = TALLY_ENOMEM;
      if (!done || rc != 0)
        continue;
      static const char *const keys[] = {"input_tokens", "output_tokens",
                                         "total_tokens"};
      double *sums[] = {&in_calls, &out_calls, &total_calls};
      for (int k = 0; k < 3; k++) {
        if (!usage_value(p, keys[k], &x))
          continue;
        *sums[k] += x;
        from_calls = true;
        tally_es_usage_t *u =
            usage_of(&ev->usage, &ev->nusage, &ucap, provider, model);
        if (u == NULL) {
          rc = TALLY_ENOMEM;
          break;
        }
        double *f[] = {&u->input, &u->output, &u->total};
        *f[k] += x;
      }
    } else if (strcmp(t, "race.standings.injected") == 0) {
      if (num_value(p, "tokens_added", &x))
        ev->race_tokens += x;
    } else if (strcmp(t, "grader.verification.file_captured") == 0 ||
               strcmp(t, "grader.verification.directory_listed") == 0) {
      bool listing = t[20] == 'd';
      if (capture_ok(e->payload, listing) &&
          !add_capture(ev, &ccap, str_value(e->payload, "key"), listing,
                       e->payload, e))
        rc = TALLY_ENOMEM;
    }
  }
  free(starts);
  if (rc != 0)
    return rc;
  if (!ev->input_tokens.set && from_calls)
    set_num(&ev->input_tokens, in_calls);
  if (!ev->output_tokens.set && from_calls)
    set_num(&ev->output_tokens, out_calls);
  if (!ev->total_tokens.set && from_calls) {
    if (total_calls > 0)
      set_num(&ev->total_tokens, total_calls);
    else if (ev->input_tokens.set && ev->output_tokens.set)
      set_num(&ev->total_tokens, ev->input_tokens.v + ev->output_tokens.v);
  }
  if (!ev->tool_calls.set && ev->tool_calls_traced > 0)
    set_num(&ev->tool_calls, (double)ev->tool_calls_traced);
  for (size_t i = 0; i < ev->nusage; i++) {
    tally_es_usage_t *u = &ev->usage[i];
    if (u->total == 0 && (u->input > 0 || u->output > 0))
      u->total = u->input + u->output;
  }
  if (ev->nusage > 1)
    qsort(ev->usage, ev->nusage, sizeof(*ev->usage), cmp_usage);
  if (ev->nmodels > 1)
    qsort(ev->models, ev->nmodels, sizeof(*ev->models), cmp_usage);
  if (ev->final_output == NULL)
    ev->warnings[ev->nwarnings++] = "final output evidence is unavailable";
  if (ev->completed < 0)
    ev->warnings[ev->nwarnings++] = "terminal run evidence is unavailable";
  return transcript(ev, run);
}

void tally_es_evidence_free(tally_es_evidence_t *ev) {
  for (size_t i = 0; ev->calls != NULL && i < ev->tool_calls_traced; i++) {
    free(ev->calls[i].tool);
    cJSON_Delete(ev->calls[i].args);
    free(ev->calls[i].origin);
    free(ev->calls[i].error);
  }
  free(ev->calls);
  free(ev->challenge_input);
  free(ev->usage);
  free(ev->models);
  free(ev->steps);
  free(ev->captures);
  free(ev->turns);
  memset(ev, 0, sizeof(*ev));
}
