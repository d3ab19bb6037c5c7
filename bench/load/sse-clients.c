/*
 * The native SSE load client: one process, one thread, one epoll loop over N raw TCP streams.
 * Same command line and stdout protocol as bench/load/sse-clients.ts (the node:http fallback), so
 * bench/load/sse-client-pool.ts can run either:
 *
 *   sse-clients --url http://127.0.0.1:P/path --server-pid PID --streams N --duration S
 *               [--head-url http://127.0.0.1:P/head] [--connect-concurrency C] [--settle-ms MS]
 *               [--ramp-timeout-ms MS] [--coalesce-us US] [--encoding identity|gzip]
 *
 * It opens the streams in waves of C (with --head-url each wave first asks the change head and resumes
 * after it, so a stream starts live), reads everything they send, prints {"ready":true}, waits for a
 * line on stdin, then for S seconds records per change frame `now - emittedAt` in milliseconds, and
 * prints one JSON report line (SseClientsReport of sse-clients.ts).
 *
 * With `--encoding gzip` each request sends `Accept-Encoding: gzip`; a response that answers
 * `Content-Encoding: gzip` is inflated (per stream: ISA-L's igzip where it was built with HAVE_ISAL, about
 * 2-3x zlib's speed, else zlib) as its bytes arrive, and each event is timed
 * when inflating has produced its last byte — decoding is part of what the client waits for. The
 * report counts streams that were gzip-coded (`gzipStreams`) and the body bytes that came over the
 * wire in the window (`bodyBytes`, chunked framing included, before inflating).
 *
 * Per byte it does only what a latency figure needs: HTTP chunked decoding, a search for the blank
 * line ending each frame, and in a change frame (one starting with `id: `) a search for the
 * `"sequence":"` and `"emittedAt":"` fields; the envelope JSON is never parsed. Frames wholly inside
 * one read are scanned in place; only a frame split across reads is copied.
 *
 * With `--coalesce-us US` it sleeps that long after a loop turn that read something, so that one turn
 * reads many streams instead of one per wake-up (the sleep can add up to that much to a measured
 * latency, never take any away). Off by default: on the 2-core machine it saved no measurable CPU
 * on either side.
 *
 * "Event-loop delay" here is the lateness of a 2 ms tick the loop tries to keep (as node's
 * monitorEventLoopDelay measures): how long a socket that became readable may have waited for this
 * process, whether it was busy or not scheduled.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
typedef struct inflate_state Inflater;
#else
#include <zlib.h>
typedef z_stream Inflater;
#endif

#define LATENCY_CEILING_MS 120000
#define DELAY_CEILING_US 10000000
#define TICK_US 2000
#define READ_BUFFER 262144
#define MAX_FRAME (4 << 20)
#define INFLATE_BUFFER 262144

typedef struct {
  char host[256];
  int port;
  char path[4096];
} Url;

enum { CONNECTING, HEADERS, BODY, CLOSED };
enum { CHUNK_SIZE, CHUNK_SIZE_LINE_END, CHUNK_DATA, CHUNK_DATA_CR, CHUNK_DATA_LF };

typedef struct {
  int fd;
  int state;
  int chunked;
  int chunk_state;
  size_t chunk_left;
  /* Response head while in HEADERS; afterwards the start of a frame split across reads. */
  char *pending;
  size_t pending_len;
  size_t pending_cap;
  /* The last byte of decoded body was '\n' (a frame may end at the first byte of the next read). */
  int last_newline;
  const char *request;
  size_t request_len;
  size_t request_sent;
  /* Non-null for a `Content-Encoding: gzip` response. */
  Inflater *z;
} Stream;

static Stream *streams;
static int requested;
static int established;
static int failed;
static int disconnects;
static int measuring;
static int finished;
static uint64_t events;
static uint64_t body_bytes;
static int gzip_streams;
static int want_gzip;
static unsigned char *inflated;
static long long first_sequence = -1;
static long long last_sequence = -1;
static uint32_t *latency_counts;
static long long latency_max;
static uint32_t *delay_counts;
static uint64_t delay_total;
static int epfd;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long long mono_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void fail(const char *what) {
  fprintf(stderr, "sse-clients: %s: %s\n", what, strerror(errno));
  exit(1);
}

static int parse_url(const char *text, Url *url) {
  if (strncmp(text, "http://", 7) != 0) return -1;
  const char *host = text + 7;
  const char *slash = strchr(host, '/');
  const char *colon = strchr(host, ':');
  if (!colon || (slash && colon > slash)) return -1;
  size_t host_len = (size_t)(colon - host);
  if (host_len >= sizeof url->host) return -1;
  memcpy(url->host, host, host_len);
  url->host[host_len] = 0;
  url->port = atoi(colon + 1);
  snprintf(url->path, sizeof url->path, "%s", slash ? slash : "/");
  return 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
static long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  long long era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (long long)doe - 719468;
}

static int digits(const char *s, int n) {
  int value = 0;
  for (int i = 0; i < n; i += 1) {
    if (s[i] < '0' || s[i] > '9') return -1;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

/* `YYYY-MM-DDTHH:MM:SS.mmmZ` (Date#toISOString) as ms since the epoch; NaN-like -1 when malformed. */
static double parse_iso_ms(const char *s, size_t len) {
  static char last[32];
  static size_t last_len;
  static double last_ms = -1;
  if (len == last_len && memcmp(s, last, len) == 0) return last_ms;
  if (len != 24 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[23] != 'Z') return -1;
  int year = digits(s, 4), month = digits(s + 5, 2), day = digits(s + 8, 2);
  int hour = digits(s + 11, 2), minute = digits(s + 14, 2), second = digits(s + 17, 2), milli = digits(s + 20, 3);
  if (year < 0 || month < 1 || day < 1 || hour < 0 || minute < 0 || second < 0 || milli < 0) return -1;
  double ms = ((double)days_from_civil(year, (unsigned)month, (unsigned)day) * 86400.0 + hour * 3600.0 + minute * 60.0 + second) * 1000.0 + milli;
  memcpy(last, s, len);
  last_len = len;
  last_ms = ms;
  return ms;
}

/*
 * `needle` in [from, to), by memchr on its first byte (glibc memmem prepares a general search on
 * every call, which for these short needles cost more than all the rest of the client together).
 */
static const char *find(const char *from, const char *to, const char *needle, size_t needle_len) {
  while (to - from >= (long)needle_len) {
    const char *at = memchr(from, needle[0], (size_t)(to - from) - needle_len + 1);
    if (!at) return NULL;
    if (memcmp(at + 1, needle + 1, needle_len - 1) == 0) return at;
    from = at + 1;
  }
  return NULL;
}

static const char *find_field(const char *from, const char *to, const char *marker, size_t *value_len) {
  size_t marker_len = strlen(marker);
  const char *at = find(from, to, marker, marker_len);
  if (!at) return NULL;
  const char *value = at + marker_len;
  const char *end = memchr(value, '"', (size_t)(to - value));
  if (!end) return NULL;
  *value_len = (size_t)(end - value);
  return value;
}

/* `emittedAt` ends the envelope: look for it in the frame's tail first. */
static const char *find_emitted_at(const char *frame, const char *end, size_t *value_len) {
  const char *tail = end - frame > 96 ? end - 96 : frame;
  const char *value = find_field(tail, end, "\"emittedAt\":\"", value_len);
  return value ? value : find_field(frame, end, "\"emittedAt\":\"", value_len);
}

/* One complete frame (without its terminating blank line). */
static void on_frame(const char *frame, size_t len) {
  if (!measuring || len < 4 || memcmp(frame, "id: ", 4) != 0) return;
  const char *end = frame + len;
  size_t sequence_len = 0, emitted_len = 0;
  const char *sequence = find_field(frame, end, "\"sequence\":\"", &sequence_len);
  const char *emitted = find_emitted_at(frame, end, &emitted_len);
  if (!sequence || !emitted) {
    fprintf(stderr, "sse-clients: change frame without sequence or emittedAt: %.*s\n", (int)(len < 200 ? len : 200), frame);
    exit(1);
  }
  double emitted_ms = parse_iso_ms(emitted, emitted_len);
  if (emitted_ms < 0) {
    fprintf(stderr, "sse-clients: emittedAt is not an ISO timestamp: %.*s\n", (int)emitted_len, emitted);
    exit(1);
  }
  long long seq = 0;
  for (size_t i = 0; i < sequence_len; i += 1) seq = seq * 10 + (sequence[i] - '0');
  long long latency = (long long)(now_ms() - emitted_ms + 0.5);
  if (latency < 0) latency = 0;
  latency_counts[latency > LATENCY_CEILING_MS ? LATENCY_CEILING_MS : latency] += 1;
  if (latency > latency_max) latency_max = latency;
  events += 1;
  if (first_sequence < 0 || seq < first_sequence) first_sequence = seq;
  if (seq > last_sequence) last_sequence = seq;
}

static void keep(Stream *s, const char *data, size_t len) {
  if (s->pending_len + len > s->pending_cap) {
    size_t cap = s->pending_cap ? s->pending_cap : 4096;
    while (cap < s->pending_len + len) cap *= 2;
    if (cap > MAX_FRAME) {
      fprintf(stderr, "sse-clients: a frame longer than %d bytes\n", MAX_FRAME);
      exit(1);
    }
    s->pending = realloc(s->pending, cap);
    if (!s->pending) fail("realloc");
    s->pending_cap = cap;
  }
  memcpy(s->pending + s->pending_len, data, len);
  s->pending_len += len;
}

/* Decoded body bytes: split into frames at each blank line. */
static void on_body(Stream *s, const char *data, size_t len) {
  if (len == 0) return;
  size_t start = 0;
  if (s->pending_len > 0) {
    /* A frame began in an earlier read: it ends here, possibly at this read's first byte. */
    if (s->last_newline && data[0] == '\n') {
      on_frame(s->pending, s->pending_len - 1);
      start = 1;
    } else {
      const char *at = find(data, data + len, "\n\n", 2);
      if (!at) {
        keep(s, data, len);
        s->last_newline = data[len - 1] == '\n';
        return;
      }
      keep(s, data, (size_t)(at - data));
      on_frame(s->pending, s->pending_len);
      start = (size_t)(at - data) + 2;
    }
    s->pending_len = 0;
    s->last_newline = 0;
  }
  while (start < len) {
    const char *at = find(data + start, data + len, "\n\n", 2);
    if (!at) {
      keep(s, data + start, len - start);
      s->last_newline = data[len - 1] == '\n';
      return;
    }
    on_frame(data + start, (size_t)(at - (data + start)));
    start = (size_t)(at - data) + 2;
  }
}

/* Body bytes after transfer decoding: inflate them when the response is gzip-coded. */
static int on_coded_body(Stream *s, const char *data, size_t len) {
  if (!s->z) {
    on_body(s, data, len);
    return 0;
  }
#ifdef HAVE_ISAL
  s->z->next_in = (uint8_t *)data;
  s->z->avail_in = (uint32_t)len;
  for (;;) {
    s->z->next_out = inflated;
    s->z->avail_out = INFLATE_BUFFER;
    int rc = isal_inflate(s->z);
    size_t out = INFLATE_BUFFER - s->z->avail_out;
    if (rc < 0) {
      fprintf(stderr, "sse-clients: isal_inflate failed (%d)\n", rc);
      return -1;
    }
    on_body(s, (const char *)inflated, out);
    /* The member's trailer checked out (ISAL_GZIP verifies CRC and length): the server ended the stream. */
    if (s->z->block_state == ISAL_BLOCK_FINISH) return 0;
    if (s->z->avail_in == 0 && s->z->avail_out != 0) return 0;
  }
#else
  s->z->next_in = (Bytef *)data;
  s->z->avail_in = (uInt)len;
  for (;;) {
    s->z->next_out = inflated;
    s->z->avail_out = INFLATE_BUFFER;
    int rc = inflate(s->z, Z_SYNC_FLUSH);
    size_t out = INFLATE_BUFFER - s->z->avail_out;
    if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
      fprintf(stderr, "sse-clients: inflate failed (%d): %s\n", rc, s->z->msg ? s->z->msg : "");
      return -1;
    }
    on_body(s, (const char *)inflated, out);
    if (rc == Z_STREAM_END) return 0; /* the member's trailer checked out: the server ended the stream */
    if (s->z->avail_in == 0 && s->z->avail_out != 0) return 0;
    if (rc == Z_BUF_ERROR && out == 0) return 0;
  }
#endif
}

/* Raw response body bytes: undo HTTP chunked transfer coding when the response uses it. */
static int on_raw_body(Stream *s, const char *data, size_t len) {
  if (measuring) body_bytes += len;
  if (!s->chunked) return on_coded_body(s, data, len);
  size_t i = 0;
  while (i < len) {
    switch (s->chunk_state) {
      case CHUNK_SIZE: {
        char c = data[i++];
        int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (digit >= 0) s->chunk_left = s->chunk_left * 16 + (size_t)digit;
        else if (c == '\r') s->chunk_state = CHUNK_SIZE_LINE_END;
        else if (c != ';' && c != ' ') return -1;
        break;
      }
      case CHUNK_SIZE_LINE_END:
        if (data[i++] != '\n') return -1;
        if (s->chunk_left == 0) return -1; /* the last chunk: the server ended the stream */
        s->chunk_state = CHUNK_DATA;
        break;
      case CHUNK_DATA: {
        size_t take = len - i < s->chunk_left ? len - i : s->chunk_left;
        if (on_coded_body(s, data + i, take) < 0) return -1;
        i += take;
        s->chunk_left -= take;
        if (s->chunk_left == 0) s->chunk_state = CHUNK_DATA_CR;
        break;
      }
      case CHUNK_DATA_CR:
        if (data[i++] != '\r') return -1;
        s->chunk_state = CHUNK_DATA_LF;
        break;
      case CHUNK_DATA_LF:
        if (data[i++] != '\n') return -1;
        s->chunk_state = CHUNK_SIZE;
        break;
    }
  }
  return 0;
}

static void close_stream(Stream *s, int was_error) {
  if (s->state == CLOSED) return;
  if (s->state == BODY) {
    if (!finished) disconnects += 1;
  } else {
    failed += 1;
  }
  (void)was_error;
  epoll_ctl(epfd, EPOLL_CTL_DEL, s->fd, NULL);
  close(s->fd);
  s->state = CLOSED;
  free(s->pending);
  s->pending = NULL;
  s->pending_len = s->pending_cap = 0;
  if (s->z) {
#ifndef HAVE_ISAL
    inflateEnd(s->z);
#endif
    free(s->z);
    s->z = NULL;
  }
}

/* Response head bytes; returns how many of `data` were head (the rest is body), or -1 on failure. */
static long on_head(Stream *s, const char *data, size_t len) {
  size_t before = s->pending_len;
  keep(s, data, len);
  const char *end = memmem(s->pending, s->pending_len, "\r\n\r\n", 4);
  if (!end) return s->pending_len > 65536 ? -1 : (long)len;
  size_t head_len = (size_t)(end - s->pending) + 4;
  if (s->pending_len < 12 || memcmp(s->pending + 9, "200", 3) != 0) return -1;
  /* Header names are case-insensitive; uWS and node:http both send lower-case or canonical case. */
  s->chunked = memmem(s->pending, head_len, "hunked", 6) != NULL;
  /* Header names are case-insensitive: look in a lower-cased copy of the head. */
  char *lower = malloc(head_len + 1);
  if (!lower) fail("malloc");
  for (size_t i = 0; i < head_len; i += 1) lower[i] = (char)(s->pending[i] >= 'A' && s->pending[i] <= 'Z' ? s->pending[i] + 32 : s->pending[i]);
  lower[head_len] = 0;
  char *coding = strstr(lower, "\r\ncontent-encoding:");
  char *line_end = coding ? strstr(coding + 2, "\r\n") : NULL;
  int gzip = coding && line_end && memmem(coding, (size_t)(line_end - coding), "gzip", 4) != NULL;
  free(lower);
  if (coding) {
    if (gzip) {
      s->z = calloc(1, sizeof *s->z);
#ifdef HAVE_ISAL
      if (!s->z) fail("calloc");
      isal_inflate_init(s->z);
      s->z->crc_flag = ISAL_GZIP;
#else
      if (!s->z || inflateInit2(s->z, 16 + MAX_WBITS) != Z_OK) fail("inflateInit2");
#endif
      gzip_streams += 1;
    } else {
      return -1; /* a coding this client cannot decode */
    }
  }
  s->pending_len = 0;
  s->state = BODY;
  established += 1;
  return (long)(head_len - before);
}

static void on_readable(Stream *s, char *buffer) {
  for (;;) {
    ssize_t n = read(s->fd, buffer, READ_BUFFER);
    if (n == 0) {
      close_stream(s, 0);
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR) continue;
      close_stream(s, 1);
      return;
    }
    size_t offset = 0;
    if (s->state == HEADERS) {
      long head = on_head(s, buffer, (size_t)n);
      if (head < 0) {
        close_stream(s, 1);
        return;
      }
      offset = (size_t)head;
    }
    if (s->state == BODY && offset < (size_t)n && on_raw_body(s, buffer + offset, (size_t)n - offset) < 0) {
      close_stream(s, 1);
      return;
    }
    if ((size_t)n < READ_BUFFER) return;
  }
}

static void on_writable(Stream *s) {
  if (s->state == CONNECTING) {
    int error = 0;
    socklen_t error_len = sizeof error;
    if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &error, &error_len) < 0 || error != 0) {
      close_stream(s, 1);
      return;
    }
    s->state = HEADERS;
  }
  while (s->request_sent < s->request_len) {
    ssize_t n = write(s->fd, s->request + s->request_sent, s->request_len - s->request_sent);
    if (n < 0) {
      if (errno == EAGAIN) return;
      close_stream(s, 1);
      return;
    }
    s->request_sent += (size_t)n;
  }
  struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
  epoll_ctl(epfd, EPOLL_CTL_MOD, s->fd, &ev);
}

static int open_stream(Stream *s, const struct sockaddr_in *address, const char *request, size_t request_len) {
  memset(s, 0, sizeof *s);
  s->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->fd < 0) {
    s->state = CLOSED;
    failed += 1;
    return -1;
  }
  int one = 1;
  setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  s->request = request;
  s->request_len = request_len;
  s->state = CONNECTING;
  if (connect(s->fd, (const struct sockaddr *)address, sizeof *address) < 0 && errno != EINPROGRESS) {
    close(s->fd);
    s->state = CLOSED;
    failed += 1;
    return -1;
  }
  struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN, .data.ptr = s};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0) fail("epoll_ctl");
  return 0;
}

/* One blocking GET (HTTP/1.0, so the server closes); the body's `"cursor":"…"` or "" for null. */
static int head_cursor(const Url *head, const struct sockaddr_in *address, char *cursor, size_t cursor_cap) {
  for (int attempt = 1; attempt <= 3; attempt += 1) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket");
    struct timeval timeout = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    char request[4608];
    int request_len = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", head->path, head->host, head->port);
    char response[65536];
    size_t got = 0;
    if (connect(fd, (const struct sockaddr *)address, sizeof *address) == 0 && write(fd, request, (size_t)request_len) == request_len) {
      for (;;) {
        ssize_t n = read(fd, response + got, sizeof response - 1 - got);
        if (n <= 0) break;
        got += (size_t)n;
        response[got] = 0;
        /* uWS answers with content-length and may keep the connection: stop at the body's end. */
        const char *body = strstr(response, "\r\n\r\n");
        const char *length = strcasestr(response, "content-length:");
        if (body && length && length < body && got >= (size_t)(body + 4 - response) + (size_t)atol(length + 15)) break;
        if (got == sizeof response - 1) break;
      }
    }
    close(fd);
    response[got] = 0;
    if (got >= 12 && memcmp(response + 9, "200", 3) == 0) {
      const char *field = strstr(response, "\"cursor\":");
      if (!field) break;
      const char *value = field + 9;
      while (*value == ' ') value += 1;
      if (strncmp(value, "null", 4) == 0) {
        cursor[0] = 0;
        return 0;
      }
      if (*value != '"') break;
      value += 1;
      const char *end = strchr(value, '"');
      if (!end || (size_t)(end - value) >= cursor_cap) break;
      memcpy(cursor, value, (size_t)(end - value));
      cursor[end - value] = 0;
      return 0;
    }
  }
  fprintf(stderr, "sse-clients: GET %s did not answer a change head\n", head->path);
  exit(1);
}

static double server_cpu_seconds(int pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *file = fopen(path, "r");
  if (!file) return 0;
  char text[4096];
  size_t n = fread(text, 1, sizeof text - 1, file);
  fclose(file);
  text[n] = 0;
  char *p = strrchr(text, ')');
  if (!p) return 0;
  p += 2;
  /* Fields after the command name start at field 3; utime and stime are fields 14 and 15. */
  for (int field = 3; field < 14 && p; field += 1) {
    p = strchr(p, ' ');
    if (p) p += 1;
  }
  if (!p) return 0;
  unsigned long long utime = 0, stime = 0;
  if (sscanf(p, "%llu %llu", &utime, &stime) != 2) return 0;
  return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
}

static double own_cpu_seconds(void) {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_utime.tv_usec / 1e6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec / 1e6;
}

static long long next_tick;
static int stdin_ready;
static long coalesce_us = 0;

/* Runs the loop until `until_us` (monotonic), or until `*done` turns true; keeps the 2 ms tick. */
static void run_loop(long long until_us, int *done, char *buffer) {
  struct epoll_event ready[1024];
  while (!(done && *done)) {
    long long now = mono_us();
    if (now >= until_us) return;
    if (now >= next_tick) {
      if (measuring) {
        long long late = now - next_tick;
        delay_counts[late > DELAY_CEILING_US ? DELAY_CEILING_US / 100 : late / 100] += 1;
        delay_total += 1;
      }
      next_tick = now + TICK_US;
    }
    long long wait_until = next_tick < until_us ? next_tick : until_us;
    int timeout_ms = (int)((wait_until - now + 999) / 1000);
    int n = epoll_wait(epfd, ready, 1024, timeout_ms);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait");
    }
    int streams_read = 0;
    for (int i = 0; i < n; i += 1) {
      if (ready[i].data.ptr == NULL) {
        char line[256];
        (void)!read(0, line, sizeof line);
        stdin_ready = 1;
        continue;
      }
      Stream *s = ready[i].data.ptr;
      if (s->state == CLOSED) continue;
      if (ready[i].events & (EPOLLOUT)) on_writable(s);
      if (s->state != CLOSED && ready[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
        if (s->state == CONNECTING) on_writable(s);
        else on_readable(s, buffer);
        streams_read += 1;
      }
    }
    if (streams_read > 0 && coalesce_us > 0) {
      struct timespec pause = {.tv_sec = coalesce_us / 1000000, .tv_nsec = (coalesce_us % 1000000) * 1000};
      nanosleep(&pause, NULL);
    }
  }
}

static const char *arg(int argc, char **argv, const char *name, const char *fallback) {
  for (int i = 1; i + 1 < argc; i += 1) if (strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

int main(int argc, char **argv) {
  const char *url_text = arg(argc, argv, "--url", NULL);
  const char *head_text = arg(argc, argv, "--head-url", NULL);
  const char *pid_text = arg(argc, argv, "--server-pid", NULL);
  if (!url_text || !pid_text) {
    fprintf(stderr, "sse-clients needs --url and --server-pid\n");
    return 2;
  }
  requested = atoi(arg(argc, argv, "--streams", "50"));
  double duration_s = atof(arg(argc, argv, "--duration", "10"));
  int concurrency = atoi(arg(argc, argv, "--connect-concurrency", "250"));
  long long settle_ms = atoll(arg(argc, argv, "--settle-ms", "1000"));
  long long ramp_timeout_ms = atoll(arg(argc, argv, "--ramp-timeout-ms", "120000"));
  int server_pid = atoi(pid_text);
  coalesce_us = atol(arg(argc, argv, "--coalesce-us", "0"));
  const char *encoding = arg(argc, argv, "--encoding", "identity");
  if (strcmp(encoding, "gzip") != 0 && strcmp(encoding, "identity") != 0) {
    fprintf(stderr, "sse-clients: --encoding is identity or gzip, not %s\n", encoding);
    return 2;
  }
  want_gzip = strcmp(encoding, "gzip") == 0;
  Url url, head;
  if (parse_url(url_text, &url) < 0 || (head_text && parse_url(head_text, &head) < 0)) {
    fprintf(stderr, "sse-clients: only http://host:port/… URLs\n");
    return 2;
  }
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)url.port)};
  if (inet_pton(AF_INET, url.host, &address.sin_addr) != 1) {
    fprintf(stderr, "sse-clients: the host must be an IPv4 address: %s\n", url.host);
    return 2;
  }
  struct sockaddr_in head_address = address;
  if (head_text) head_address.sin_port = htons((uint16_t)head.port);

  streams = calloc((size_t)(requested > 0 ? requested : 1), sizeof *streams);
  latency_counts = calloc(LATENCY_CEILING_MS + 1, sizeof *latency_counts);
  delay_counts = calloc(DELAY_CEILING_US / 100 + 1, sizeof *delay_counts);
  char *buffer = malloc(READ_BUFFER);
  inflated = malloc(INFLATE_BUFFER);
  if (!inflated || !streams || !latency_counts || !delay_counts || !buffer) fail("calloc");
  epfd = epoll_create1(EPOLL_CLOEXEC);
  if (epfd < 0) fail("epoll_create1");
  next_tick = mono_us() + TICK_US;

  /* Ramp: waves of `concurrency` streams, each wave resuming after the head it just read. */
  long long ramp_started = mono_us();
  long long ramp_deadline = ramp_started + ramp_timeout_ms * 1000;
  int started = 0;
  char **requests = calloc((size_t)(requested / (concurrency > 0 ? concurrency : 1) + 2), sizeof *requests);
  int waves = 0;
  while (started < requested && mono_us() < ramp_deadline) {
    char cursor[1024] = "";
    if (head_text) head_cursor(&head, &head_address, cursor, sizeof cursor);
    char *request = malloc(8192);
    if (!request) fail("malloc");
    snprintf(request, 8192, "GET %s%s%s%s HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n%s\r\n", url.path,
             cursor[0] ? (strchr(url.path, '?') ? "&" : "?") : "", cursor[0] ? "after=" : "", cursor, url.host, url.port,
             want_gzip ? "Accept-Encoding: gzip\r\n" : "");
    requests[waves++] = request;
    size_t request_len = strlen(request);
    int wave = requested - started < concurrency ? requested - started : concurrency;
    int target = established + failed + wave;
    for (int i = 0; i < wave; i += 1) open_stream(&streams[started + i], &address, request, request_len);
    started += wave;
    /* The wave is done once each of its streams answered its head or failed. */
    while (established + failed < target && mono_us() < ramp_deadline) run_loop(mono_us() + 5000, NULL, buffer);
  }
  double ramp_seconds = (mono_us() - ramp_started) / 1e6;
  run_loop(mono_us() + settle_ms * 1000, NULL, buffer);

  printf("{\"ready\":true}\n");
  fflush(stdout);
  struct epoll_event stdin_event = {.events = EPOLLIN, .data.ptr = NULL};
  if (epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &stdin_event) < 0) fail("epoll_ctl stdin");
  run_loop(ramp_deadline + 3600LL * 1000000, &stdin_ready, buffer);
  epoll_ctl(epfd, EPOLL_CTL_DEL, 0, NULL);

  double server_cpu_start = server_cpu_seconds(server_pid);
  double own_cpu_start = own_cpu_seconds();
  long long window_started = mono_us();
  measuring = 1;
  next_tick = window_started + TICK_US;
  run_loop(window_started + (long long)(duration_s * 1e6), NULL, buffer);
  measuring = 0;
  finished = 1;
  double window_seconds = (mono_us() - window_started) / 1e6;
  double server_cores = (server_cpu_seconds(server_pid) - server_cpu_start) / window_seconds;
  double own_cores = (own_cpu_seconds() - own_cpu_start) / window_seconds;

  double delay_p99_ms = 0;
  if (delay_total > 0) {
    uint64_t rank = (uint64_t)((double)delay_total * 0.99 + 0.999999), seen = 0;
    for (int i = 0; i <= DELAY_CEILING_US / 100; i += 1) {
      seen += delay_counts[i];
      if (seen >= rank) {
        delay_p99_ms = i / 10.0;
        break;
      }
    }
  }

  /* Reset rather than close politely: 10,000 closed streams would otherwise sit in TIME_WAIT here. */
  struct linger reset = {.l_onoff = 1, .l_linger = 0};
  for (int i = 0; i < started; i += 1) {
    if (streams[i].state == CLOSED) continue;
    setsockopt(streams[i].fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
    close(streams[i].fd);
  }

  printf("{\"requested\":%d,\"established\":%d,\"disconnects\":%d,\"rampSeconds\":%.3f,\"windowSeconds\":%.3f,\"events\":%llu,\"latencyCounts\":[",
         requested, established, disconnects, ramp_seconds, window_seconds, (unsigned long long)events);
  int first = 1;
  for (int ms = 0; ms <= LATENCY_CEILING_MS; ms += 1) {
    if (latency_counts[ms] == 0) continue;
    printf("%s[%lld,%u]", first ? "" : ",", ms == LATENCY_CEILING_MS ? latency_max : (long long)ms, latency_counts[ms]);
    first = 0;
  }
  printf("],\"sequences\":");
  if (events == 0) printf("null");
  else printf("{\"first\":%lld,\"last\":%lld}", first_sequence, last_sequence);
  printf(",\"serverCpuCores\":%.4f,\"clientCpuCores\":%.4f,\"clientLoopDelayP99Ms\":%.1f,\"gzipStreams\":%d,\"bodyBytes\":%llu}\n", server_cores, own_cores,
         delay_p99_ms, gzip_streams, (unsigned long long)body_bytes);
  fflush(stdout);
  return 0;
}
