/*
 * eb_main.c - the firmware's run loop: bring up the port, announce readiness,
 * then feed every received byte to the protocol until the link closes.
 */
#include "eb_port.h"
#include "eb_proto.h"

int eb_main(void)
{
    int c;

    eb_port_init();
    eb_proto_init();
    eb_proto_banner();
    while ((c = eb_port_getc()) >= 0) {
        eb_proto_feed((uint8_t)c);
    }
    return 0;
}

#ifndef EB_PORT_OWNS_MAIN
int main(void)
{
    return eb_main();
}
#endif
