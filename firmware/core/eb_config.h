/*
 * eb_config.h - sizes of the firmware core's static buffers and build options.
 *
 * Every value can be overridden per port (PORT_CFLAGS += -DEB_ARENA_BYTES=...
 * in firmware/ports/<name>/port.mk). No heap is used anywhere: these buffers
 * are the whole RAM budget of the core (see `eb-info%`, field ram-bytes).
 */
#ifndef EB_CONFIG_H
#define EB_CONFIG_H

/* Model blob uploaded with `eb-upload model`; read in place by the engine. */
#ifndef EB_MODEL_MAX_BYTES
#define EB_MODEL_MAX_BYTES (256u * 1024u)
#endif

/* 1: the build links a model blob into the image (firmware/Makefile
 * EB_MODEL_BLOB=file), loaded at start-up and read in place (flash on a
 * microcontroller); the RAM buffer above still takes uploads. */
#ifndef EB_FLASH_MODEL
#define EB_FLASH_MODEL 0
#endif

/* Input buffer filled by `db load N` + `db <hex>` or `eb-upload input`. */
#ifndef EB_INPUT_MAX_BYTES
#define EB_INPUT_MAX_BYTES (16u * 1024u)
#endif

/* Tensor arena handed to eb_model_init(). */
#ifndef EB_ARENA_BYTES
#define EB_ARENA_BYTES (160u * 1024u)
#endif

/* Longest command line (bytes before the '%'). The reference firmware takes
 * 80; longer `db` hex chunks mean fewer round trips. */
#ifndef EB_CMD_MAX_BYTES
#define EB_CMD_MAX_BYTES 512u
#endif

/* Largest payload of one binary upload frame (announced in m-eb-upload-ready). */
#ifndef EB_FRAME_PAYLOAD_MAX
#define EB_FRAME_PAYLOAD_MAX 1024u
#endif

/* Per-layer timings kept for `eb-infer N W layers`; later layers are counted
 * but not timed (reported as m-eb-layers-dropped-<n>). */
#ifndef EB_LAYERS_MAX
#define EB_LAYERS_MAX 256u
#endif

/* Largest N and W accepted by `infer` / `eb-infer`. */
#ifndef EB_INFER_N_MAX
#define EB_INFER_N_MAX 2000000000u
#endif

/* Size of the reply buffer flushed to eb_port_write() (at least one line). */
#ifndef EB_OUT_BYTES
#define EB_OUT_BYTES 256u
#endif

/* MLPerf Tiny energy mode (9600 baud, set by the port): `timestamp` pulses the
 * GPIO marker low instead of printing m-lap-us. */
#ifndef EB_CFG_ENERGY_MODE
#define EB_CFG_ENERGY_MODE 0
#endif

/* Firmware identification printed by `profile%` as m-profile-[...]. */
#define EB_FW_VERSION "edgebench firmware 1.0"
#define EB_PROTO_VERSION 2u

#endif /* EB_CONFIG_H */
