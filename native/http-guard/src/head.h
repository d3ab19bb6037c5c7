// The request-head checker of the HTTP guard: an incremental scanner over the bytes a connection
// receives, request after request (heads checked, Content-Length bodies skipped), that stops at the
// first request the web server could not answer and says why.
#ifndef HTTP_GUARD_HEAD_H
#define HTTP_GUARD_HEAD_H

#include <stddef.h>
#include <stdint.h>

// The most header fields and head bytes a request may carry. uWebSockets.js 20.30 parses at most
// 48 fields (a 49th leaves the request waiting for its timeout); 16 KiB is Node's own head limit.
#define GUARD_MAX_FIELDS 48
#define GUARD_MAX_HEAD_BYTES 16384

enum guard_reason {
  GUARD_OK = 0,
  GUARD_NO_VERSION,        // 400: a request line without an HTTP version
  GUARD_BAD_REQUEST_LINE,  // 400: not `METHOD SP target SP HTTP/x.y`
  GUARD_BAD_LINE_END,      // 400: a bare LF or CR in the head
  GUARD_BAD_HEADER,        // 400: a header line that is not `name: value`, or a folded line
  GUARD_NO_HOST,           // 400: HTTP/1.1 without Host
  GUARD_BAD_LENGTH,        // 400: a Content-Length that is not one decimal number
  GUARD_METHOD,            // 405: a method the web server does not parse
  GUARD_TOO_MANY_FIELDS,   // 431: more than GUARD_MAX_FIELDS header fields
  GUARD_HEAD_TOO_LARGE,    // 431: a head over GUARD_MAX_HEAD_BYTES
  GUARD_VERSION,           // 505: an HTTP version other than 1.1
  GUARD_REASONS
};

#define GUARD_KEEP 64

struct guard_head {
  uint8_t mode;           // GUARD_MODE_*
  uint8_t line_state;     // 0 in a line, 1 after its CR
  uint8_t request_line;   // the current line is the request line
  uint8_t colon;          // the current header line's colon was seen
  uint8_t leading_space;  // the current header line began with whitespace
  uint8_t bad_name;       // a non-token byte before the colon
  uint8_t has_host, has_upgrade, has_transfer_encoding, has_length;
  uint8_t spaces;         // spaces in the request line
  uint16_t fields;
  uint16_t keep_len;      // bytes of the current line kept in `keep`
  uint16_t name_len;      // length of the current header's name
  uint32_t line_len;
  uint32_t head_bytes;
  uint64_t length;        // Content-Length
  uint64_t body_left;
  char keep[GUARD_KEEP];  // the first GUARD_KEEP bytes of the current line
  char last[9];           // the request line's last 9 bytes (" HTTP/1.1"), a ring indexed by line_len
  char method[17];        // the refused method, for the answer
};

#define GUARD_MODE_HEAD 0
#define GUARD_MODE_BODY 1
#define GUARD_MODE_PASS 2   // after an upgrade or a chunked body: the rest of the connection is not checked

void guard_head_reset(struct guard_head* head);

// Scans `length` received bytes. Returns GUARD_OK when all of them may go to the web server, else
// the reason of the first refused request; `*request_start` is then the offset in `bytes` where that
// request began (0 when it began in an earlier call).
int guard_head_scan(struct guard_head* head, const unsigned char* bytes, size_t length, size_t* request_start);

#endif
