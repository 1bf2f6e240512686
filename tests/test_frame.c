/* Frames and batches: round trips, frames cut at every byte, and every
 * kind of malformed input the decoders must refuse without reading past
 * the payload. */
#include "worker/frame.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Encodes a frame holding payload at the end of b. */
static void put_frame(tally_buf_t *b, const char *payload, size_t len) {
  size_t mark = tally_frame_begin(b);
  tally_buf_put(b, payload, len);
  cr_assert_eq(tally_frame_end(b, mark), 0);
}

/* A heap copy of exactly len bytes, so that ASan catches any read past
 * the end. The caller frees it. */
static char *exact_copy(const char *data, size_t len) {
  char *p = malloc(len > 0 ? len : 1);
  cr_assert_not_null(p);
  if (len > 0)
    memcpy(p, data, len);
  return p;
}

/* Three frames whose payloads are empty, one byte and 300 bytes. */
static const char *const payloads[3] = {"", "a", NULL};
static char big[300];

static size_t payload_len(int i) {
  return i == 2 ? sizeof(big) : strlen(payloads[i]);
}

static const char *payload_data(int i) {
  return i == 2 ? big : payloads[i];
}

static void stream_of_three(tally_buf_t *b) {
  for (size_t i = 0; i < sizeof(big); i++)
    big[i] = (char)(i * 7);
  tally_buf_init(b);
  for (int i = 0; i < 3; i++)
    put_frame(b, payload_data(i), payload_len(i));
}

/* Takes every whole frame from r, checking each against the next of the
 * three expected payloads. Returns the new count of frames seen. */
static int drain(tally_frame_reader_t *r, int seen) {
  const char *p;
  size_t len;
  int rc;
  while ((rc = tally_frame_reader_next(r, &p, &len)) == 1) {
    cr_assert_lt(seen, 3);
    cr_assert_eq(len, payload_len(seen));
    cr_assert(len == 0 || memcmp(p, payload_data(seen), len) == 0);
    seen++;
  }
  cr_assert_eq(rc, 0, "%s", r->err);
  return seen;
}

Test(frame, decodes_a_stream_split_at_every_byte_boundary) {
  tally_buf_t b;
  stream_of_three(&b);
  for (size_t cut = 0; cut <= b.len; cut++) {
    tally_frame_reader_t r;
    tally_frame_reader_init(&r);
    cr_assert_eq(tally_frame_reader_feed(&r, b.data, cut), 0);
    int seen = drain(&r, 0);
    cr_assert_eq(tally_frame_reader_feed(&r, b.data + cut, b.len - cut), 0);
    seen = drain(&r, seen);
    cr_assert_eq(seen, 3, "cut at %zu", cut);
    cr_assert_eq(tally_frame_reader_eof(&r), 0);
    tally_frame_reader_close(&r);
  }
  tally_buf_close(&b);
}

Test(frame, decodes_a_stream_fed_one_byte_at_a_time) {
  tally_buf_t b;
  stream_of_three(&b);
  tally_frame_reader_t r;
  tally_frame_reader_init(&r);
  int seen = 0;
  for (size_t i = 0; i < b.len; i++) {
    cr_assert_eq(tally_frame_reader_feed(&r, b.data + i, 1), 0);
    seen = drain(&r, seen);
  }
  cr_assert_eq(seen, 3);
  cr_assert_eq(tally_frame_reader_eof(&r), 0);
  tally_frame_reader_close(&r);
  tally_buf_close(&b);
}

Test(frame, decodes_a_stream_read_through_space_and_commit) {
  tally_buf_t b;
  stream_of_three(&b);
  tally_frame_reader_t r;
  tally_frame_reader_init(&r);
  int seen = 0;
  for (size_t off = 0; off < b.len;) {
    char *buf;
    size_t avail;
    cr_assert_eq(tally_frame_reader_space(&r, 5, &buf, &avail), 0);
    cr_assert_geq(avail, 5);
    size_t n = b.len - off < 5 ? b.len - off : 5;
    memcpy(buf, b.data + off, n);
    tally_frame_reader_commit(&r, n);
    off += n;
    seen = drain(&r, seen);
  }
  cr_assert_eq(seen, 3);
  tally_frame_reader_close(&r);
  tally_buf_close(&b);
}

Test(frame, returns_many_frames_from_one_feed) {
  tally_buf_t b;
  tally_buf_init(&b);
  char text[16];
  for (int i = 0; i < 5000; i++) {
    int n = snprintf(text, sizeof(text), "frame %d", i);
    put_frame(&b, text, (size_t)n);
  }
  tally_frame_reader_t r;
  tally_frame_reader_init(&r);
  cr_assert_eq(tally_frame_reader_feed(&r, b.data, b.len), 0);
  const char *p;
  size_t len;
  for (int i = 0; i < 5000; i++) {
    cr_assert_eq(tally_frame_reader_next(&r, &p, &len), 1);
    int n = snprintf(text, sizeof(text), "frame %d", i);
    cr_assert_eq(len, (size_t)n);
    cr_assert(memcmp(p, text, len) == 0);
  }
  cr_assert_eq(tally_frame_reader_next(&r, &p, &len), 0);
  tally_frame_reader_close(&r);
  tally_buf_close(&b);
}

Test(frame, refuses_a_length_over_the_limit_and_keeps_refusing) {
  const unsigned char header[4] = {0x04, 0x00, 0x00, 0x01}; /* 64 MiB + 1 */
  tally_frame_reader_t r;
  tally_frame_reader_init(&r);
  const char *p;
  size_t len;
  cr_assert_eq(tally_frame_reader_feed(&r, (const char *)header, 3), 0);
  cr_assert_eq(tally_frame_reader_next(&r, &p, &len), 0);
  cr_assert_eq(tally_frame_reader_feed(&r, (const char *)header + 3, 1), 0);
  cr_assert_eq(tally_frame_reader_next(&r, &p, &len), TALLY_E2BIG);
  cr_assert(strstr(r.err, "67108865") != NULL, "%s", r.err);
  cr_assert_eq(tally_frame_reader_feed(&r, "\0\0\0\0", 4), 0);
  cr_assert_eq(tally_frame_reader_next(&r, &p, &len), TALLY_E2BIG);
  cr_assert_eq(tally_frame_reader_eof(&r), TALLY_E2BIG);
  tally_frame_reader_close(&r);
}

Test(frame, accepts_a_frame_of_exactly_the_limit_and_asks_room_for_it) {
  const unsigned char header[4] = {0x04, 0x00, 0x00, 0x00}; /* 64 MiB */
  tally_frame_reader_t r;
  tally_frame_reader_init(&r);
  cr_assert_eq(tally_frame_reader_feed(&r, (const char *)header, 4), 0);
  char *buf;
  size_t avail;
  cr_assert_eq(tally_frame_reader_space(&r, 1, &buf, &avail), 0);
  cr_assert_geq(avail, TALLY_FRAME_MAX);
  memset(buf, 'x', TALLY_FRAME_MAX);
  tally_frame_reader_commit(&r, TALLY_FRAME_MAX);
  const char *p;
  size_t len;
  cr_assert_eq(tally_frame_reader_next(&r, &p, &len), 1);
  cr_assert_eq(len, TALLY_FRAME_MAX);
  cr_assert_eq(p[len - 1], 'x');
  tally_frame_reader_close(&r);
}

Test(frame, reports_a_stream_that_ends_inside_a_frame) {
  tally_buf_t b;
  stream_of_three(&b);
  /* Cuts inside the header, inside the payload, and between frames. */
  const size_t cuts[] = {0, 2, 4, 5, 9, 10};
  const int want[] = {0, TALLY_EINVAL, 0, TALLY_EINVAL, 0, TALLY_EINVAL};
  for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
    tally_frame_reader_t r;
    tally_frame_reader_init(&r);
    cr_assert_eq(tally_frame_reader_feed(&r, b.data, cuts[i]), 0);
    drain(&r, 0);
    cr_assert_eq(tally_frame_reader_eof(&r), want[i], "cut at %zu: %s", cuts[i],
                 r.err);
    if (want[i] != 0)
      cr_assert(strstr(r.err, "ended inside a frame") != NULL, "%s", r.err);
    tally_frame_reader_close(&r);
  }
  tally_buf_close(&b);
}

Test(frame, refuses_to_encode_a_payload_over_the_limit) {
  tally_buf_t b;
  tally_buf_init(&b);
  tally_buf_puts(&b, "before");
  size_t mark = tally_frame_begin(&b);
  cr_assert(tally_buf_reserve(&b, TALLY_FRAME_MAX + 1));
  memset(b.data + b.len, 'y', TALLY_FRAME_MAX + 1);
  b.len += TALLY_FRAME_MAX + 1;
  cr_assert_eq(tally_frame_end(&b, mark), TALLY_E2BIG);
  cr_assert_eq(b.len, 6);
  cr_assert_str_eq(b.data, "before");
  tally_buf_close(&b);
}

/* The jobs of the batch tests. */
static const tally_batch_job_t jobs[] = {
    {"1700000000000-0", 15, 1, "q1", 2, "{\"task\":\"a\"}", 12},
    {"1700000000000-1", 15, 4000000000u, "", 0, "", 0},
    {"x", 1, 0, "main", 4, "[1,2,3]", 7},
};
#define NJOBS (sizeof(jobs) / sizeof(jobs[0]))

/* Encodes the jobs as one framed batch in b. */
static void encode_jobs(tally_buf_t *b) {
  tally_batch_writer_t w;
  tally_buf_init(b);
  tally_batch_writer_begin(&w, b);
  for (size_t i = 0; i < NJOBS; i++)
    tally_batch_put_job(&w, jobs[i].id, jobs[i].id_len, jobs[i].deliveries,
                        jobs[i].queue, jobs[i].queue_len, jobs[i].job,
                        jobs[i].job_len);
  cr_assert_eq(tally_batch_writer_end(&w), 0);
}

/* Takes the one frame of b through a reader, and checks it is alone. */
static void one_payload(tally_frame_reader_t *r, const tally_buf_t *b,
                        const char **p, size_t *len) {
  tally_frame_reader_init(r);
  cr_assert_eq(tally_frame_reader_feed(r, b->data, b->len), 0);
  cr_assert_eq(tally_frame_reader_next(r, p, len), 1);
  cr_assert_eq(r->end - r->start, 0);
}

static void assert_bytes(const char *got, size_t got_len, const char *want,
                         size_t want_len) {
  cr_assert_eq(got_len, want_len);
  cr_assert(want_len == 0 || memcmp(got, want, want_len) == 0);
}

Test(batch, round_trips_jobs) {
  tally_buf_t b;
  encode_jobs(&b);
  tally_frame_reader_t r;
  const char *p;
  size_t len;
  one_payload(&r, &b, &p, &len);
  tally_batch_reader_t br;
  tally_batch_job_t job;
  cr_assert_eq(tally_batch_reader_init(&br, p, len), 0);
  cr_assert_eq(br.count, NJOBS);
  for (size_t i = 0; i < NJOBS; i++) {
    cr_assert_eq(tally_batch_next_job(&br, &job), 1, "%s", br.err);
    assert_bytes(job.id, job.id_len, jobs[i].id, jobs[i].id_len);
    assert_bytes(job.job, job.job_len, jobs[i].job, jobs[i].job_len);
    assert_bytes(job.queue, job.queue_len, jobs[i].queue, jobs[i].queue_len);
    cr_assert_eq(job.deliveries, jobs[i].deliveries);
  }
  cr_assert_eq(tally_batch_next_job(&br, &job), 0, "%s", br.err);
  cr_assert_eq(tally_batch_next_job(&br, &job), 0);
  tally_frame_reader_close(&r);
  tally_buf_close(&b);
}

Test(batch, round_trips_results_written_whole_and_in_place) {
  tally_buf_t b;
  tally_batch_writer_t w;
  tally_buf_init(&b);
  tally_buf_puts(&b, "earlier bytes stay");
  size_t before = b.len;
  tally_batch_writer_begin(&w, &b);
  tally_batch_put_result(&w, "1-0", 3, TALLY_BATCH_SCORED, "{\"score\":1}", 11);
  tally_batch_begin_result(&w, "1-1", 3);
  tally_buf_puts(&b, "{\"error\":\"no\"}");
  cr_assert_eq(tally_batch_end_result(&w, TALLY_BATCH_JOB_ERROR), 0);
  tally_batch_put_result(&w, "1-2", 3, TALLY_BATCH_SCORED, NULL, 0);
  tally_batch_put_result(&w, "1-3", 3, TALLY_BATCH_TOKEN,
                         "{\"submission\":\"s\"}", 16);
  static const char parts[] = "{\"score\":1}\n{\"task\":\"t\"}\n\n";
  tally_batch_put_result(&w, "1-4", 3, TALLY_BATCH_SCORED, parts,
                         sizeof(parts) - 1);
  cr_assert_eq(tally_batch_writer_end(&w), 0);
  cr_assert(memcmp(b.data, "earlier bytes stay", before) == 0);

  tally_buf_t frame = {.data = b.data + before, .len = b.len - before};
  tally_frame_reader_t r;
  const char *p;
  size_t len;
  one_payload(&r, &frame, &p, &len);
  tally_batch_reader_t br;
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_reader_init(&br, p, len), 0);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1, "%s", br.err);
  assert_bytes(res.id, res.id_len, "1-0", 3);
  cr_assert_eq(res.status, TALLY_BATCH_SCORED);
  assert_bytes(res.body, res.body_len, "{\"score\":1}", 11);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1, "%s", br.err);
  assert_bytes(res.id, res.id_len, "1-1", 3);
  cr_assert_eq(res.status, TALLY_BATCH_JOB_ERROR);
  assert_bytes(res.body, res.body_len, "{\"error\":\"no\"}", 14);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1, "%s", br.err);
  cr_assert_eq(res.body_len, 0);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1, "%s", br.err);
  assert_bytes(res.id, res.id_len, "1-3", 3);
  cr_assert_eq(res.status, TALLY_BATCH_TOKEN);
  assert_bytes(res.body, res.body_len, "{\"submission\":\"s\"}", 16);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1, "%s", br.err);
  cr_assert_eq(res.status, TALLY_BATCH_SCORED);
  assert_bytes(res.body, res.body_len, parts, sizeof(parts) - 1);
  cr_assert_eq(tally_batch_next_result(&br, &res), 0, "%s", br.err);
  tally_frame_reader_close(&r);
  tally_buf_close(&b);
}

Test(batch, round_trips_a_batch_with_no_items) {
  tally_buf_t b;
  tally_batch_writer_t w;
  tally_buf_init(&b);
  tally_batch_writer_begin(&w, &b);
  cr_assert_eq(tally_batch_writer_end(&w), 0);
  cr_assert_eq(b.len, 8);
  cr_assert(memcmp(b.data, "\0\0\0\4\0\0\0\0", 8) == 0);
  tally_batch_reader_t br;
  tally_batch_job_t job;
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_reader_init(&br, b.data + 4, 4), 0);
  cr_assert_eq(tally_batch_next_job(&br, &job), 0);
  cr_assert_eq(tally_batch_reader_init(&br, b.data + 4, 4), 0);
  cr_assert_eq(tally_batch_next_result(&br, &res), 0);
  tally_buf_close(&b);
}

/* Decodes len bytes of payload (from an exact heap copy) as jobs. Returns
 * the first non-1 code of the reader. */
static int decode_jobs(const char *payload, size_t len, char *err,
                       size_t errlen) {
  char *copy = exact_copy(payload, len);
  tally_batch_reader_t br;
  tally_batch_job_t job;
  int rc = tally_batch_reader_init(&br, copy, len);
  while (rc == 0 && (rc = tally_batch_next_job(&br, &job)) == 1) {
    rc = 0; /* 1 means an item: go on to the next. */
    /* Touch every byte, so that ASan sees a read out of bounds. */
    volatile char sink = 0;
    for (size_t i = 0; i < job.id_len; i++)
      sink ^= job.id[i];
    for (size_t i = 0; i < job.job_len; i++)
      sink ^= job.job[i];
    (void)sink;
  }
  snprintf(err, errlen, "%s", br.err);
  free(copy);
  return rc;
}

Test(batch, refuses_every_truncation_of_a_job_batch) {
  tally_buf_t b;
  encode_jobs(&b);
  const char *payload = b.data + TALLY_FRAME_HEADER;
  size_t len = b.len - TALLY_FRAME_HEADER;
  char err[128];
  cr_assert_eq(decode_jobs(payload, len, err, sizeof(err)), 0, "%s", err);
  for (size_t cut = 0; cut < len; cut++) {
    cr_assert_eq(decode_jobs(payload, cut, err, sizeof(err)), TALLY_EINVAL,
                 "cut at %zu", cut);
    cr_assert_neq(err[0], '\0');
  }
  tally_buf_close(&b);
}

Test(batch, refuses_bytes_after_the_last_item) {
  tally_buf_t b;
  encode_jobs(&b);
  tally_buf_putc(&b, 'z');
  char err[128];
  cr_assert_eq(decode_jobs(b.data + 4, b.len - 4, err, sizeof(err)),
               TALLY_EINVAL);
  cr_assert(strstr(err, "1 bytes after its 3 items") != NULL, "%s", err);
  tally_buf_close(&b);
}

Test(batch, refuses_a_count_the_payload_cannot_hold) {
  char err[128];
  cr_assert_eq(decode_jobs("\xff\xff\xff\xff", 4, err, sizeof(err)),
               TALLY_EINVAL);
  cr_assert(strstr(err, "announces 4294967295 items") != NULL, "%s", err);
  cr_assert_eq(decode_jobs("\0\0\0\1\0\0\0\0\0", 9, err, sizeof(err)),
               TALLY_EINVAL);
  cr_assert_eq(decode_jobs("\0\0", 2, err, sizeof(err)), TALLY_EINVAL);
  cr_assert(strstr(err, "no item count") != NULL, "%s", err);
}

Test(batch, refuses_lengths_that_run_past_the_payload) {
  /* One job whose id length, then whose job length, is 2^32 - 1. */
  static const char huge_id[] = "\0\0\0\1"
                                "\xff\xff\xff\xff"
                                "abcdefghijklmnop";
  static const char huge_job[] = "\0\0\0\1"
                                 "\0\0\0\1"
                                 "a"
                                 "\0\0\0\1"
                                 "\0\0\0\0"
                                 "\xff\xff\xff\xff"
                                 "abcd";
  /* A queue name longer than 64 bytes. */
  static const char long_queue[] = "\0\0\0\1"
                                   "\0\0\0\1"
                                   "a"
                                   "\0\0\0\1"
                                   "\0\0\0\x41"
                                   "0123456789012345678901234567890123456789"
                                   "0123456789012345678901234"
                                   "\0\0\0\0";
  char err[128];
  cr_assert_eq(decode_jobs(huge_id, sizeof(huge_id) - 1, err, sizeof(err)),
               TALLY_EINVAL);
  cr_assert(strstr(err, "item 0: id runs past") != NULL, "%s", err);
  cr_assert_eq(decode_jobs(huge_job, sizeof(huge_job) - 1, err, sizeof(err)),
               TALLY_EINVAL);
  cr_assert(strstr(err, "item 0: job runs past") != NULL, "%s", err);
  cr_assert_eq(
      decode_jobs(long_queue, sizeof(long_queue) - 1, err, sizeof(err)),
      TALLY_EINVAL);
  cr_assert(strstr(err, "item 0: a queue name of 65 bytes") != NULL, "%s", err);
}

Test(batch, refuses_empty_ids_long_ids_and_ids_holding_a_nul) {
  char long_id[TALLY_BATCH_ID_MAX + 1];
  memset(long_id, 'i', sizeof(long_id));
  const struct {
    const char *id;
    size_t len;
  } bad[] = {{"", 0}, {"a\0b", 3}, {long_id, sizeof(long_id)}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    /* The writer refuses the batch and leaves the buffer as it was. */
    tally_buf_t b;
    tally_batch_writer_t w;
    tally_buf_init(&b);
    tally_buf_puts(&b, "kept");
    tally_batch_writer_begin(&w, &b);
    tally_batch_put_job(&w, "ok", 2, 1, "", 0, "{}", 2);
    tally_batch_put_job(&w, bad[i].id, bad[i].len, 1, "", 0, "{}", 2);
    cr_assert_eq(tally_batch_writer_end(&w), TALLY_EINVAL);
    cr_assert_eq(b.len, 4);
    cr_assert_str_eq(b.data, "kept");

    /* The reader refuses the same id written by hand. */
    tally_buf_reset(&b);
    tally_buf_put(&b, "\0\0\0\1", 4);
    char n[4] = {0, 0, (char)(bad[i].len >> 8), (char)bad[i].len};
    tally_buf_put(&b, n, 4);
    tally_buf_put(&b, bad[i].id, bad[i].len);
    tally_buf_put(&b, "\0\0\0\1\0\0\0\2{}", 10);
    char err[128];
    cr_assert_eq(decode_jobs(b.data, b.len, err, sizeof(err)), TALLY_EINVAL);
    cr_assert(strstr(err, "item 0: id of") != NULL, "%s", err);
    tally_buf_close(&b);
  }
}

Test(batch, refuses_an_unknown_status) {
  static const char payload[] = "\0\0\0\1"
                                "\0\0\0\1"
                                "a"
                                "\4"
                                "\0\0\0\0";
  tally_batch_reader_t br;
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_reader_init(&br, payload, sizeof(payload) - 1), 0);
  cr_assert_eq(tally_batch_next_result(&br, &res), TALLY_EINVAL);
  cr_assert(strstr(br.err, "unknown status 4") != NULL, "%s", br.err);
  cr_assert_eq(tally_batch_next_result(&br, &res), TALLY_EINVAL);

  tally_buf_t b;
  tally_batch_writer_t w;
  tally_buf_init(&b);
  tally_batch_writer_begin(&w, &b);
  tally_batch_put_result(&w, "a", 1, (tally_batch_status_t)4, "{}", 2);
  cr_assert_eq(tally_batch_writer_end(&w), TALLY_EINVAL);
  cr_assert_eq(b.len, 0);
  tally_buf_close(&b);
}

Test(batch, drops_a_result_that_would_overflow_the_frame) {
  tally_buf_t b;
  tally_batch_writer_t w;
  tally_buf_init(&b);
  tally_batch_writer_begin(&w, &b);
  tally_batch_put_result(&w, "1-0", 3, TALLY_BATCH_SCORED, "{}", 2);
  size_t before = b.len;
  tally_batch_begin_result(&w, "1-1", 3);
  cr_assert(tally_buf_reserve(&b, TALLY_FRAME_MAX));
  memset(b.data + b.len, ' ', TALLY_FRAME_MAX);
  b.len += TALLY_FRAME_MAX;
  cr_assert_eq(tally_batch_end_result(&w, TALLY_BATCH_SCORED), TALLY_E2BIG);
  cr_assert_eq(b.len, before);
  tally_batch_put_result(&w, "1-1", 3, TALLY_BATCH_JOB_ERROR, "{}", 2);
  cr_assert_eq(tally_batch_writer_end(&w), 0);

  tally_batch_reader_t br;
  tally_batch_result_t res;
  cr_assert_eq(tally_batch_reader_init(&br, b.data + 4, b.len - 4), 0);
  cr_assert_eq(br.count, 2);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1);
  cr_assert_eq(tally_batch_next_result(&br, &res), 1);
  cr_assert_eq(res.status, TALLY_BATCH_JOB_ERROR);
  cr_assert_eq(tally_batch_next_result(&br, &res), 0);
  tally_buf_close(&b);
}

/* A small xorshift generator, so that failures can be replayed. */
static uint32_t next_random(uint32_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

Test(batch, survives_random_corruption_of_a_batch) {
  tally_buf_t b;
  encode_jobs(&b);
  const char *payload = b.data + TALLY_FRAME_HEADER;
  size_t len = b.len - TALLY_FRAME_HEADER;
  char *mutant = malloc(len);
  cr_assert_not_null(mutant);
  uint32_t seed = 12345;
  char err[128];
  for (int round = 0; round < 20000; round++) {
    memcpy(mutant, payload, len);
    int flips = 1 + (int)(next_random(&seed) % 4);
    for (int f = 0; f < flips; f++)
      mutant[next_random(&seed) % len] = (char)next_random(&seed);
    size_t cut = len - next_random(&seed) % 3;
    int rc = decode_jobs(mutant, cut, err, sizeof(err));
    cr_assert(rc == 0 || rc == TALLY_EINVAL, "round %d: %d", round, rc);
  }
  free(mutant);
  tally_buf_close(&b);
}
