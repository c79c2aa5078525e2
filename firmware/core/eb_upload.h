/*
 * eb_upload.h - the upload receiver of the edgebench firmware core: binary
 * frames "EB 5A seq:u16le len:u16le payload crc32:u32le" after `eb-upload`
 * (PROTOCOL.md "Binary upload"), written in place into the destination buffer,
 * acknowledged or NAKed frame by frame. A session's frames carry its id (the
 * seq of the framed eb-upload request, 0 if unframed) as their CRC seed. A
 * session ends on completion (CRC of the whole upload checked), on the abort
 * frame, on EB_UPLOAD_IDLE_MS without a byte, or when the command parser sees
 * a new framed request between frames. Frames met in command mode (late
 * retransmissions) are skipped unanswered.
 *
 * The command line itself belongs to the parser (eb_proto.c): the receiver
 * tells it, by return codes, what a byte means for the line being collected.
 */
#ifndef EB_UPLOAD_H
#define EB_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

/* An upload with no byte for this long is over: the next byte is a command byte
 * (checked when that byte arrives; the port API has no receive timeout). */
#ifndef EB_UPLOAD_IDLE_MS
#define EB_UPLOAD_IDLE_MS 5000u
#endif

/* Called once an upload's CRC holds, before m-eb-upload-ok is written. */
typedef void (*eb_upload_done_fn)(uint32_t len, uint32_t crc);

/* Reset: no session, no stray frame. No output. */
void eb_upload_init(void);

/* Start a session: `total` bytes with CRC-32 `crc` into dest, announced by
 * m-eb-upload-ready-[<frame max>]. The session id is the seq of the reply
 * being framed (eb_reply_frame_seq()); framing stays on until the session ends. */
void eb_upload_begin(uint8_t *dest, uint32_t total, uint32_t crc, eb_upload_done_fn done);

/* A session is running: received bytes go to eb_upload_feed(). */
int eb_upload_active(void);

/* What eb_upload_feed() and eb_upload_stray() say about the command line. */
enum {
    EB_UPLOAD_TAKEN = 0,     /* an upload byte; the line is untouched */
    EB_UPLOAD_COMMAND_BYTE,  /* not a frame byte: the parser's (between frames or in command mode) */
    EB_UPLOAD_LINE_DROP,     /* a frame starts: drop the partial line */
    EB_UPLOAD_ENDED          /* the session ended (m-ready sent): drop the line */
};

/* One byte of a running session. */
int eb_upload_feed(uint8_t c);

/* Command mode: EB_UPLOAD_COMMAND_BYTE, or the byte belongs to a stray frame
 * (EB_UPLOAD_TAKEN; EB_UPLOAD_LINE_DROP once it is recognised). */
int eb_upload_stray(uint8_t c);

/* Called before each byte of a running session: after EB_UPLOAD_IDLE_MS idle,
 * reports the timeout, ends the session and returns EB_UPLOAD_ENDED. */
int eb_upload_check_idle(void);

/* End the session now (m-ready, framing off); the caller wrote why. */
void eb_upload_end(void);

/* Static RAM of the receiver (for eb-info's ram-bytes). */
size_t eb_upload_ram_bytes(void);

#endif /* EB_UPLOAD_H */
