/* Frames and batches of frame.h: byte layouts only, no I/O. */
#include "worker/frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The smallest result item: an empty id length, a status, a body length.
 * A job item is larger, so no payload holds more than len / 9 items. */
#define MIN_ITEM 9

/* A reader that has no frame length to go by reads at least this much. */
#define MIN_ROOM 4096

static uint32_t get_u32(const void *p) {
  const unsigned char *b = p;
  return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
         (uint32_t)b[3];
}

static void set_u32(void *p, uint32_t v) {
  unsigned char *b = p;
  b[0] = (unsigned char)(v >> 24);
  b[1] = (unsigned char)(v >> 16);
  b[2] = (unsigned char)(v >> 8);
  b[3] = (unsigned char)v;
}

static void put_u32(tally_buf_t *b, uint32_t v) {
  char s[4];
  set_u32(s, v);
  tally_buf_put(b, s, sizeof(s));
}

/* Cuts b back to len bytes; an out-of-memory flag stays set. */
static void cut(tally_buf_t *b, size_t len) {
  if (b->data != NULL && len <= b->len) {
    b->len = len;
    b->data[len] = '\0';
  }
}

static bool status_ok(unsigned status) {
  return status == TALLY_BATCH_SCORED || status == TALLY_BATCH_JOB_ERROR ||
         status == TALLY_BATCH_TOKEN || status == TALLY_BATCH_JUDGE;
}

static bool id_ok(const char *id, size_t len) {
  return len >= 1 && len <= TALLY_BATCH_ID_MAX && memchr(id, '\0', len) == NULL;
}

void tally_frame_reader_init(tally_frame_reader_t *r) {
  memset(r, 0, sizeof(*r));
}

void tally_frame_reader_close(tally_frame_reader_t *r) {
  free(r->data);
  memset(r, 0, sizeof(*r));
}

static int reader_fail(tally_frame_reader_t *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int reader_fail(tally_frame_reader_t *r, int code, const char *fmt,
                       ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, sizeof(r->err), fmt, ap);
  va_end(ap);
  r->error = code;
  return code;
}

/* Room is made by moving the unread bytes to the front of the buffer when
 * that frees enough, and by growing it otherwise. While a frame's header
 * is known, the room asked for covers the rest of the frame, so a large
 * frame arrives in a few large reads rather than many small ones. */
int tally_frame_reader_space(tally_frame_reader_t *r, size_t min, char **buf,
                             size_t *avail) {
  size_t held = r->end - r->start;
  size_t want = min > 0 ? min : 1;
  if (held >= TALLY_FRAME_HEADER) {
    size_t frame = TALLY_FRAME_HEADER + (size_t)get_u32(r->data + r->start);
    if (frame <= TALLY_FRAME_HEADER + TALLY_FRAME_MAX && frame > held &&
        frame - held > want)
      want = frame - held;
  }
  if (held == 0)
    r->start = r->end = 0;
  if (r->cap - r->end < want && r->start > 0) {
    memmove(r->data, r->data + r->start, held);
    r->start = 0;
    r->end = held;
  }
  if (r->cap - r->end < want) {
    if (want > SIZE_MAX / 2 - r->end)
      return TALLY_ENOMEM;
    size_t cap = r->cap * 2;
    if (cap < r->end + want)
      cap = r->end + want;
    if (cap < MIN_ROOM)
      cap = MIN_ROOM;
    char *data = realloc(r->data, cap);
    if (data == NULL)
      return TALLY_ENOMEM;
    r->data = data;
    r->cap = cap;
  }
  *buf = r->data + r->end;
  *avail = r->cap - r->end;
  return 0;
}

void tally_frame_reader_commit(tally_frame_reader_t *r, size_t n) {
  r->end += n <= r->cap - r->end ? n : r->cap - r->end;
}

int tally_frame_reader_feed(tally_frame_reader_t *r, const char *data,
                            size_t len) {
  char *buf;
  size_t avail;
  if (len == 0)
    return 0;
  int rc = tally_frame_reader_space(r, len, &buf, &avail);
  if (rc != 0)
    return rc;
  memcpy(buf, data, len);
  tally_frame_reader_commit(r, len);
  return 0;
}

int tally_frame_reader_next(tally_frame_reader_t *r, const char **payload,
                            size_t *len) {
  if (r->error != 0)
    return r->error;
  size_t held = r->end - r->start;
  if (held < TALLY_FRAME_HEADER)
    return 0;
  uint32_t n = get_u32(r->data + r->start);
  if (n > TALLY_FRAME_MAX)
    return reader_fail(r, TALLY_E2BIG,
                       "frame announces %lu bytes, over the limit of %lu",
                       (unsigned long)n, (unsigned long)TALLY_FRAME_MAX);
  if (held - TALLY_FRAME_HEADER < n)
    return 0;
  *payload = r->data + r->start + TALLY_FRAME_HEADER;
  *len = n;
  r->start += TALLY_FRAME_HEADER + n;
  return 1;
}

int tally_frame_reader_eof(tally_frame_reader_t *r) {
  if (r->error != 0)
    return r->error;
  size_t held = r->end - r->start;
  if (held == 0)
    return 0;
  if (held < TALLY_FRAME_HEADER)
    return reader_fail(r, TALLY_EINVAL,
                       "stream ended inside a frame header (%zu of %d bytes)",
                       held, TALLY_FRAME_HEADER);
  return reader_fail(
      r, TALLY_EINVAL, "stream ended inside a frame (%zu of %lu payload bytes)",
      held - TALLY_FRAME_HEADER, (unsigned long)get_u32(r->data + r->start));
}

size_t tally_frame_begin(tally_buf_t *b) {
  size_t mark = b->len;
  put_u32(b, 0);
  return mark;
}

int tally_frame_end(tally_buf_t *b, size_t mark) {
  if (b->oom) {
    cut(b, mark);
    return TALLY_ENOMEM;
  }
  size_t n = b->len - mark - TALLY_FRAME_HEADER;
  if (n > TALLY_FRAME_MAX) {
    cut(b, mark);
    return TALLY_E2BIG;
  }
  set_u32(b->data + mark, (uint32_t)n);
  return 0;
}

/* Writer errors are sticky; the first one is the one reported. */
static void writer_fail(tally_batch_writer_t *w, int code) {
  if (w->error == 0)
    w->error = code;
}

/* Appends a u32 length and the bytes, refusing a field that could never
 * fit in a frame rather than copying it first. */
static void put_field(tally_batch_writer_t *w, const char *s, size_t n) {
  if (n > TALLY_FRAME_MAX) {
    writer_fail(w, TALLY_E2BIG);
    return;
  }
  put_u32(w->buf, (uint32_t)n);
  if (n > 0)
    tally_buf_put(w->buf, s, n);
}

static bool put_id(tally_batch_writer_t *w, const char *id, size_t len) {
  if (!id_ok(id, len)) {
    writer_fail(w, TALLY_EINVAL);
    return false;
  }
  put_field(w, id, len);
  return true;
}

void tally_batch_writer_begin(tally_batch_writer_t *w, tally_buf_t *b) {
  memset(w, 0, sizeof(*w));
  w->buf = b;
  w->frame = tally_frame_begin(b);
  put_u32(b, 0);
}

void tally_batch_put_job(tally_batch_writer_t *w, const char *id, size_t id_len,
                         uint32_t deliveries, const char *queue,
                         size_t queue_len, const char *job, size_t job_len) {
  if (queue_len > TALLY_BATCH_QUEUE_MAX) {
    writer_fail(w, TALLY_EINVAL);
    return;
  }
  if (!put_id(w, id, id_len))
    return;
  put_u32(w->buf, deliveries);
  put_field(w, queue, queue_len);
  put_field(w, job, job_len);
  w->count++;
}

void tally_batch_begin_result(tally_batch_writer_t *w, const char *id,
                              size_t id_len) {
  w->item = w->buf->len;
  put_id(w, id, id_len);
  w->status = w->buf->len;
  tally_buf_put(w->buf, "\0\0\0\0\0", 5);
}

int tally_batch_end_result(tally_batch_writer_t *w,
                           tally_batch_status_t status) {
  tally_buf_t *b = w->buf;
  if (!status_ok(status))
    writer_fail(w, TALLY_EINVAL);
  if (b->oom)
    writer_fail(w, TALLY_ENOMEM);
  if (w->error != 0)
    return w->error;
  if (b->len - w->frame - TALLY_FRAME_HEADER > TALLY_FRAME_MAX) {
    cut(b, w->item);
    return TALLY_E2BIG;
  }
  b->data[w->status] = (char)status;
  set_u32(b->data + w->status + 1, (uint32_t)(b->len - w->status - 5));
  w->count++;
  return 0;
}

void tally_batch_put_result(tally_batch_writer_t *w, const char *id,
                            size_t id_len, tally_batch_status_t status,
                            const char *body, size_t body_len) {
  if (body_len > TALLY_FRAME_MAX) {
    writer_fail(w, TALLY_E2BIG);
    return;
  }
  tally_batch_begin_result(w, id, id_len);
  if (body_len > 0)
    tally_buf_put(w->buf, body, body_len);
  if (tally_batch_end_result(w, status) == TALLY_E2BIG)
    writer_fail(w, TALLY_E2BIG);
}

int tally_batch_writer_end(tally_batch_writer_t *w) {
  if (w->buf->oom)
    writer_fail(w, TALLY_ENOMEM);
  if (w->error != 0) {
    cut(w->buf, w->frame);
    return w->error;
  }
  set_u32(w->buf->data + w->frame + TALLY_FRAME_HEADER, w->count);
  return tally_frame_end(w->buf, w->frame);
}

static int batch_fail(tally_batch_reader_t *br, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int batch_fail(tally_batch_reader_t *br, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(br->err, sizeof(br->err), fmt, ap);
  va_end(ap);
  br->error = TALLY_EINVAL;
  br->pos = br->end;
  return TALLY_EINVAL;
}

int tally_batch_reader_init(tally_batch_reader_t *br, const char *payload,
                            size_t len) {
  memset(br, 0, sizeof(*br));
  if (len < 4)
    return batch_fail(br, "batch of %zu bytes has no item count", len);
  br->pos = (const unsigned char *)payload + 4;
  br->end = (const unsigned char *)payload + len;
  br->count = get_u32(payload);
  if (br->count > (len - 4) / MIN_ITEM)
    return batch_fail(br, "batch announces %lu items in %zu bytes",
                      (unsigned long)br->count, len);
  return 0;
}

/* Takes n bytes of the payload, or fails naming the field of the item. */
static int take(tally_batch_reader_t *br, size_t n, const char *field,
                const unsigned char **p) {
  if ((size_t)(br->end - br->pos) < n)
    return batch_fail(br, "batch item %lu: %s runs past the payload's end",
                      (unsigned long)br->index, field);
  *p = br->pos;
  br->pos += n;
  return 0;
}

static int take_u32(tally_batch_reader_t *br, const char *field, uint32_t *v) {
  const unsigned char *p = NULL;
  int rc = take(br, 4, field, &p);
  if (rc == 0)
    *v = get_u32(p);
  return rc;
}

/* Takes a u32 length and that many bytes. */
static int take_field(tally_batch_reader_t *br, const char *field,
                      const char **s, size_t *n) {
  uint32_t len = 0;
  const unsigned char *p = NULL;
  int rc = take_u32(br, field, &len);
  if (rc == 0)
    rc = take(br, len, field, &p);
  if (rc == 0) {
    *s = (const char *)p;
    *n = len;
  }
  return rc;
}

/* Starts the next item: returns 0 at the end of the batch (checking that
 * no bytes follow it), 1 with its id taken, or an error. */
static int next_item(tally_batch_reader_t *br, const char **id,
                     size_t *id_len) {
  if (br->error != 0)
    return br->error;
  if (br->index == br->count) {
    if (br->pos != br->end)
      return batch_fail(br, "batch has %zu bytes after its %lu items",
                        (size_t)(br->end - br->pos), (unsigned long)br->count);
    return 0;
  }
  int rc = take_field(br, "id", id, id_len);
  if (rc != 0)
    return rc;
  if (!id_ok(*id, *id_len))
    return batch_fail(br,
                      "batch item %lu: id of %zu bytes is empty, longer "
                      "than %d bytes or holds a NUL",
                      (unsigned long)br->index, *id_len, TALLY_BATCH_ID_MAX);
  return 1;
}

int tally_batch_next_job(tally_batch_reader_t *br, tally_batch_job_t *job) {
  tally_batch_job_t j;
  int rc = next_item(br, &j.id, &j.id_len);
  if (rc != 1)
    return rc;
  if ((rc = take_u32(br, "deliveries", &j.deliveries)) != 0 ||
      (rc = take_field(br, "queue", &j.queue, &j.queue_len)) != 0 ||
      (rc = take_field(br, "job", &j.job, &j.job_len)) != 0)
    return rc;
  if (j.queue_len > TALLY_BATCH_QUEUE_MAX)
    return batch_fail(br, "batch item %lu: a queue name of %zu bytes",
                      (unsigned long)br->index, j.queue_len);
  br->index++;
  *job = j;
  return 1;
}

int tally_batch_next_result(tally_batch_reader_t *br,
                            tally_batch_result_t *res) {
  tally_batch_result_t r;
  const unsigned char *status = NULL;
  int rc = next_item(br, &r.id, &r.id_len);
  if (rc != 1)
    return rc;
  if ((rc = take(br, 1, "status", &status)) != 0)
    return rc;
  if (!status_ok(*status))
    return batch_fail(br, "batch item %lu: unknown status %u",
                      (unsigned long)br->index, *status);
  r.status = (tally_batch_status_t)*status;
  if ((rc = take_field(br, "body", &r.body, &r.body_len)) != 0)
    return rc;
  br->index++;
  *res = r;
  return 1;
}
