/*
 * eb_upload.c - the upload receiver (eb_upload.h): binary frames, sessions,
 * the idle timeout, the abort frame, stray frames in command mode.
 */
#include "eb_upload.h"

#include <string.h>

#include "eb_config.h"
#include "eb_crc32.h"
#include "eb_port.h"
#include "eb_reply.h"
#include "eb_timing.h"

#define EB_ABORT_SEQ 0xFFFFu /* seq of the abort frame (len 0) */

#if EB_FRAME_PAYLOAD_MAX > 65535u || EB_FRAME_PAYLOAD_MAX < 1u
#error "EB_FRAME_PAYLOAD_MAX must be 1..65535 (u16 length field)"
#endif

enum { UP_OFF = 0, UP_SYNC0, UP_SYNC1, UP_HEADER, UP_PAYLOAD, UP_CRC };
/* A stray upload frame met in command mode (a late retransmission): skipped. */
enum { STRAY_OFF = 0, STRAY_SYNC1, STRAY_HEADER, STRAY_SKIP };

static struct {
    /* a stray upload frame being skipped in command mode */
    struct {
        int state;
        uint8_t hdr[4];
        uint32_t n;
        uint32_t skip;
    } stray;
    /* the session */
    int state;
    uint16_t sid;          /* session id (the request's seq; 0 if unframed): frame CRC seed */
    uint32_t last_rx;      /* counter at the last upload byte (idle timeout) */
    eb_upload_done_fn done;
    uint8_t *dest;
    uint32_t total;        /* announced length */
    uint32_t pos;          /* bytes committed (acknowledged) */
    uint32_t crc_announced;
    uint16_t expect;       /* sequence number of the next frame */
    int nak_sent;          /* a NAK for `expect` is outstanding */
    /* the frame being received */
    uint8_t hdr[4];
    uint32_t hdr_n;
    uint16_t seq;
    uint16_t len;
    uint32_t got;          /* payload bytes of this frame so far */
    int in_place;          /* payload is written straight to dest+pos */
    uint32_t crc;          /* running CRC of seq, len, payload */
    uint32_t crc_rx;
    uint32_t crc_n;
} U;

void eb_upload_init(void)
{
    memset(&U, 0, sizeof U);
}

size_t eb_upload_ram_bytes(void)
{
    return sizeof U;
}

int eb_upload_active(void)
{
    return U.state != UP_OFF;
}

void eb_upload_begin(uint8_t *dest, uint32_t total, uint32_t crc, eb_upload_done_fn done)
{
    U.dest = dest;
    U.done = done;
    U.sid = eb_reply_frame_seq();
    U.last_rx = eb_port_counter();
    U.total = total;
    U.pos = 0u;
    U.crc_announced = crc;
    U.expect = 0u;
    U.nak_sent = 0;
    U.state = UP_SYNC0;
    eb_out_str("m-eb-upload-ready-[");
    eb_out_u32(EB_FRAME_PAYLOAD_MAX);
    eb_out_line("]");
}

void eb_upload_end(void)
{
    U.state = UP_OFF;
    eb_out_ready();
    eb_reply_frame_end();
}

/* An upload idle for EB_UPLOAD_IDLE_MS is over; seen when the next byte comes
 * (a counter that wraps within the idle time can hide one wrap: then the next
 * framed command still ends the upload). */
int eb_upload_check_idle(void)
{
    uint32_t now = eb_port_counter();
    uint64_t limit = (uint64_t)eb_port_counter_hz() * EB_UPLOAD_IDLE_MS / 1000u;
    uint32_t idle = eb_ticks_between(U.last_rx, now);
    U.last_rx = now;
    if (limit > eb_timing_mask() / 2u) {
        limit = eb_timing_mask() / 2u;
    }
    if ((uint64_t)idle <= limit) {
        return EB_UPLOAD_TAKEN;
    }
    eb_out_str("e-[eb-upload-timeout: no upload byte for ");
    eb_out_u32(EB_UPLOAD_IDLE_MS);
    eb_out_line(" ms, back in command mode]");
    eb_upload_end();
    return EB_UPLOAD_ENDED;
}

/* Command mode meets "EB 5A": an upload frame that came after its upload
 * ended (a late retransmission, or the resynchronising abort frame). The
 * partial line before it is dropped, the frame is skipped unanswered. */
static int feed_stray(uint8_t c)
{
    switch (U.stray.state) {
    case STRAY_SYNC1:
        if (c == 0x5Au) {
            U.stray.state = STRAY_HEADER;
            U.stray.n = 0u;
            return EB_UPLOAD_LINE_DROP;
        }
        U.stray.state = STRAY_OFF;
        return EB_UPLOAD_COMMAND_BYTE; /* not a frame (the 0xEB is dropped) */
    case STRAY_HEADER:
        U.stray.hdr[U.stray.n++] = c;
        if (U.stray.n == 4u) {
            uint32_t len = (uint32_t)U.stray.hdr[2] | ((uint32_t)U.stray.hdr[3] << 8);
            if (len > EB_FRAME_PAYLOAD_MAX) {
                U.stray.state = STRAY_OFF; /* not a frame header */
            } else {
                U.stray.skip = len + 4u; /* payload and CRC */
                U.stray.state = STRAY_SKIP;
            }
        }
        return EB_UPLOAD_TAKEN;
    case STRAY_SKIP:
        if (--U.stray.skip == 0u) {
            U.stray.state = STRAY_OFF;
        }
        return EB_UPLOAD_TAKEN;
    default:
        U.stray.state = STRAY_OFF;
        return EB_UPLOAD_COMMAND_BYTE;
    }
}

int eb_upload_stray(uint8_t c)
{
    if (U.stray.state != STRAY_OFF) {
        int r = feed_stray(c);
        if (r != EB_UPLOAD_COMMAND_BYTE) {
            return r;
        }
    }
    if (c == 0xEBu) {
        U.stray.state = STRAY_SYNC1;
        return EB_UPLOAD_TAKEN;
    }
    return EB_UPLOAD_COMMAND_BYTE;
}

static void up_nak(int damaged)
{
    /* Every damaged frame (bad CRC, impossible header) is NAKed at once, so the host resends
     * within one round trip instead of after a timeout; intact frames ahead of a gap get one
     * NAK per missing frame (a window of them would otherwise ask for the same resend again). */
    if (damaged || !U.nak_sent) {
        U.nak_sent = 1;
        eb_out_str("e-[eb-nak-");
        eb_out_u32(U.expect);
        eb_out_line("]");
        eb_out_flush();
    }
    U.state = UP_SYNC0;
}

static void up_ack(uint16_t seq)
{
    eb_out_str("m-eb-ack-");
    eb_out_u32(seq);
    eb_out_eol();
    eb_out_flush();
}

static void up_complete(void)
{
    uint32_t crc = eb_crc32(U.dest, U.total);
    if (crc != U.crc_announced) {
        eb_out_str("e-[eb-upload-crc-mismatch: received ");
        eb_out_hex(crc, 8u);
        eb_out_str(", announced ");
        eb_out_hex(U.crc_announced, 8u);
        eb_out_line("]");
        eb_upload_end();
        return;
    }
    U.done(U.total, crc);
    eb_out_str("m-eb-upload-ok-[");
    eb_out_hex(crc, 8u);
    eb_out_line("]");
    eb_upload_end();
}

/* The frame's CRC arrived: abort, NAK, overrun, ack (and maybe complete). */
static void up_frame_done(void)
{
    uint16_t behind;
    if (U.len == 0u && U.seq == EB_ABORT_SEQ &&
        (U.crc_rx == U.crc || U.crc_rx == eb_crc32(U.hdr, 4u))) {
        /* the abort frame, of this session or of session 0 (a host resynchronising) */
        eb_out_line("e-[eb-upload-aborted]");
        eb_upload_end();
        return;
    }
    if (U.crc_rx != U.crc) {
        up_nak(1); /* damaged, or a frame of another session (its CRC has another seed) */
        return;
    }
    if (U.seq == U.expect) {
        if (!U.in_place) { /* longer than what is left of the announced length */
            eb_out_str("e-[eb-upload-overrun: frame ");
            eb_out_u32(U.seq);
            eb_out_str(" goes past the announced ");
            eb_out_u32(U.total);
            eb_out_line(" bytes]");
            eb_upload_end();
            return;
        }
        U.pos += U.len;
        U.expect++;
        U.nak_sent = 0;
        up_ack(U.seq);
        U.state = UP_SYNC0;
        if (U.pos == U.total) {
            up_complete();
        }
        return;
    }
    behind = (uint16_t)(U.expect - U.seq);
    if (behind < 0x8000u) {
        up_ack(U.seq); /* a retransmitted frame we already have: ack again */
        U.state = UP_SYNC0;
    } else {
        up_nak(0); /* ahead of the next expected frame: one was lost */
    }
}

static void up_header_done(void)
{
    U.seq = (uint16_t)(U.hdr[0] | (U.hdr[1] << 8));
    U.len = (uint16_t)(U.hdr[2] | (U.hdr[3] << 8));
    U.crc = eb_crc32_update(U.sid, U.hdr, 4u); /* seeded with the session id */
    U.got = 0u;
    U.crc_rx = 0u;
    U.crc_n = 0u;
    if (U.len > EB_FRAME_PAYLOAD_MAX || (U.len == 0u && U.seq != EB_ABORT_SEQ)) {
        up_nak(1); /* a corrupted header: resynchronise on the next EB 5A */
        return;
    }
    U.in_place = U.seq == U.expect && U.len <= U.total - U.pos;
    U.state = U.len > 0u ? UP_PAYLOAD : UP_CRC;
}

int eb_upload_feed(uint8_t c)
{
    switch (U.state) {
    case UP_SYNC0:
        if (c != 0xEBu) {
            return EB_UPLOAD_COMMAND_BYTE;
        }
        U.state = UP_SYNC1;
        return EB_UPLOAD_LINE_DROP;
    case UP_SYNC1:
        if (c == 0x5Au) {
            U.state = UP_HEADER;
            U.hdr_n = 0u;
        } else if (c != 0xEBu) {
            U.state = UP_SYNC0;
        }
        break;
    case UP_HEADER:
        U.hdr[U.hdr_n++] = c;
        if (U.hdr_n == 4u) {
            up_header_done();
        }
        break;
    case UP_PAYLOAD:
        /* Written in place; only an acknowledged frame advances pos, so a
         * frame that fails its CRC is simply overwritten by its resend. */
        if (U.in_place) {
            U.dest[U.pos + U.got] = c;
        }
        U.crc = eb_crc32_update(U.crc, &c, 1u);
        if (++U.got == U.len) {
            U.state = UP_CRC;
        }
        break;
    case UP_CRC:
        U.crc_rx |= (uint32_t)c << (8u * U.crc_n);
        if (++U.crc_n == 4u) {
            up_frame_done();
        }
        break;
    default:
        U.state = UP_OFF;
        break;
    }
    return U.state == UP_OFF ? EB_UPLOAD_ENDED : EB_UPLOAD_TAKEN;
}
