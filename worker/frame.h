/* Length-prefixed frames, and the job and result batches they carry between
 * tallyd and its workers: pure encoding and decoding, no I/O. */
#ifndef TALLY_FRAME_H
#define TALLY_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "config/error.h"
#include "config/jsonw.h"

/* A frame is a 4-byte big-endian payload length, then the payload. A frame
 * that announces more than TALLY_FRAME_MAX payload bytes is an error. See
 * docs/worker-protocol.md for the whole protocol. */
#define TALLY_FRAME_HEADER 4
#define TALLY_FRAME_MAX (64u * 1024 * 1024)

/* Incremental frame decoder. Bytes go in as they arrive, in pieces of any
 * size; whole payloads come out. The reader owns its buffer, which grows to
 * hold the largest frame seen so far. A framing error is sticky: the
 * stream cannot be resynchronized, so every later call returns it again. */
typedef struct tally_frame_reader_s {
  char *data; /* owned */
  size_t cap;
  size_t start;  /* first byte not yet returned in a frame */
  size_t end;    /* one past the last byte held */
  int error;     /* the sticky framing error, or 0 */
  char err[128]; /* says what the error was */
} tally_frame_reader_t;

/* tally_frame_reader_init never fails; tally_frame_reader_close frees the
 * buffer, and with it every payload the reader returned. */
void tally_frame_reader_init(tally_frame_reader_t *r);
void tally_frame_reader_close(tally_frame_reader_t *r);

/* Appends len bytes of the stream. Returns 0, or TALLY_ENOMEM with
 * nothing appended. */
int tally_frame_reader_feed(tally_frame_reader_t *r, const char *data,
                            size_t len);

/* The zero-copy form of feed, for read() or a libuv alloc_cb: points *buf
 * at room for at least min bytes (more when the frame being read is known
 * to need more) and sets *avail to its size; the caller reads into it and
 * then calls tally_frame_reader_commit with the count read (0 is fine).
 * Returns 0, or TALLY_ENOMEM with the reader unchanged. */
int tally_frame_reader_space(tally_frame_reader_t *r, size_t min, char **buf,
                             size_t *avail);
void tally_frame_reader_commit(tally_frame_reader_t *r, size_t n);

/* Takes the next whole frame. Returns 1 with *payload and *len set, 0 when
 * more bytes are needed, or TALLY_E2BIG when a frame announces more than
 * TALLY_FRAME_MAX bytes (or the sticky error of an earlier call), with
 * r->err saying why. The payload lives in the reader's buffer: it is valid
 * until the next call on r, and is not NUL-terminated. */
int tally_frame_reader_next(tally_frame_reader_t *r, const char **payload,
                            size_t *len);

/* Tells r that the stream has ended. Returns 0 when it ended between
 * frames, or TALLY_EINVAL (with r->err giving the byte counts) when it cut
 * a frame short, or the sticky error. Call it after next has returned 0. */
int tally_frame_reader_eof(tally_frame_reader_t *r);

/* Frame encoding: tally_frame_begin appends a header to b and returns its
 * offset; the caller appends the payload; tally_frame_end writes the
 * payload length into that header. tally_frame_end returns 0; TALLY_ENOMEM
 * if b ran out of memory; or TALLY_E2BIG if the payload is larger than
 * TALLY_FRAME_MAX. On error it cuts b back to mark. */
size_t tally_frame_begin(tally_buf_t *b);
int tally_frame_end(tally_buf_t *b, size_t mark);

/* Batches. A request payload carries jobs and a response payload carries
 * results, each as a big-endian u32 item count followed by the items:
 *
 *   job:    u32 id_len, id, u32 deliveries, u32 queue_len, queue,
 *           u32 job_len, job
 *   result: u32 id_len, id, u8 status, u32 body_len, body
 *
 * An id is a Redis stream entry id: 1 to TALLY_BATCH_ID_MAX bytes, with no
 * NUL byte. A queue is the name of the queue the job was read from (0 to
 * TALLY_BATCH_QUEUE_MAX bytes; empty: not checked). A job is the job's
 * JSON text; a body is what the worker writes for the status below
 * (engine/engine.h). */
#define TALLY_BATCH_ID_MAX 255
#define TALLY_BATCH_QUEUE_MAX 64

typedef enum tally_batch_status_e {
  /* body is four parts, each ended by the next part's newline: the
   * result, its summary, its public view and its full view (the last
   * three possibly empty; see docs/worker-protocol.md) */
  TALLY_BATCH_SCORED = 0,
  TALLY_BATCH_JOB_ERROR = 1, /* body is {"submission", "error"}; the job
                                can never succeed */
  TALLY_BATCH_TOKEN = 2,     /* a token job: body is {"submission",
                                "participant"} */
  TALLY_BATCH_JUDGE = 3,     /* a sample that needs a judge's verdict: body
                                is {"submission", "prompt", "system"} */
} tally_batch_status_t;

/* Encodes one batch, framed, at the end of a buffer. Usage:
 *
 *   tally_batch_writer_begin(&w, &buf);
 *   tally_batch_put_job(&w, ...);   (or results, never both)
 *   rc = tally_batch_writer_end(&w);
 *
 * The put calls never fail on the spot: an invalid id or a lack of memory
 * is remembered and reported by tally_batch_writer_end. */
typedef struct tally_batch_writer_s {
  tally_buf_t *buf; /* borrowed */
  size_t frame;     /* offset of the frame header in buf */
  size_t item;      /* offset of the open result */
  size_t status;    /* offset of the open result's status byte */
  uint32_t count;
  int error;
} tally_batch_writer_t;

/* Starts a framed batch at the end of b, which must outlive w's use. */
void tally_batch_writer_begin(tally_batch_writer_t *w, tally_buf_t *b);

/* Appends one job (ids and texts are copied). */
void tally_batch_put_job(tally_batch_writer_t *w, const char *id, size_t id_len,
                         uint32_t deliveries, const char *queue,
                         size_t queue_len, const char *job, size_t job_len);

/* Appends one result (ids and bodies are copied). */
void tally_batch_put_result(tally_batch_writer_t *w, const char *id,
                            size_t id_len, tally_batch_status_t status,
                            const char *body, size_t body_len);

/* The zero-copy form of put_result: after begin_result, the caller appends
 * the body to w->buf directly (tally_engine_score can write there), then
 * calls end_result. end_result returns 0; or TALLY_E2BIG when that item
 * would make the payload larger than TALLY_FRAME_MAX, after removing the
 * item whole, so that the caller can put a short error in its place. */
void tally_batch_begin_result(tally_batch_writer_t *w, const char *id,
                              size_t id_len);
int tally_batch_end_result(tally_batch_writer_t *w,
                           tally_batch_status_t status);

/* Completes the batch: writes the item count and the frame length. Returns
 * 0; TALLY_ENOMEM; TALLY_EINVAL for an invalid id; or TALLY_E2BIG when the
 * payload is larger than TALLY_FRAME_MAX. On error the buffer is cut back
 * to where the batch began. */
int tally_batch_writer_end(tally_batch_writer_t *w);

/* One decoded job or result. Every pointer points into the payload given
 * to tally_batch_reader_init, and is valid as long as that payload. The
 * id holds no NUL byte; none of the fields is NUL-terminated. */
typedef struct tally_batch_job_s {
  const char *id;
  size_t id_len;
  uint32_t deliveries; /* how many times Redis delivered the job */
  const char *queue;   /* the queue it came from; queue_len 0: none */
  size_t queue_len;
  const char *job;
  size_t job_len;
} tally_batch_job_t;

typedef struct tally_batch_result_s {
  const char *id;
  size_t id_len;
  tally_batch_status_t status;
  const char *body;
  size_t body_len;
} tally_batch_result_t;

/* Iterates over the items of a batch payload, checking every length
 * against the payload's end, so a malformed payload is an error and never
 * an out-of-bounds read. The reader borrows the payload and holds no
 * other resource, so it has no _close. */
typedef struct tally_batch_reader_s {
  const unsigned char *pos, *end;
  uint32_t count; /* items announced; at most payload length / 9 */
  uint32_t index; /* items read so far */
  int error;      /* the sticky decoding error, or 0 */
  char err[128];
} tally_batch_reader_t;

/* Reads the item count of payload (len bytes). Returns 0, or TALLY_EINVAL
 * with br->err saying why: the payload is shorter than the count, or
 * announces more items than its length can hold. */
int tally_batch_reader_init(tally_batch_reader_t *br, const char *payload,
                            size_t len);

/* Take the next item. Return 1 with *job (or *res) set; 0 after the last
 * item; or TALLY_EINVAL with br->err naming the item and the problem: a
 * length that runs past the payload, an invalid id, an unknown status, or
 * bytes left over after the last item. An error is sticky: every later
 * call returns it again. */
int tally_batch_next_job(tally_batch_reader_t *br, tally_batch_job_t *job);
int tally_batch_next_result(tally_batch_reader_t *br,
                            tally_batch_result_t *res);

#endif
