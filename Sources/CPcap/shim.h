#ifndef ENCLAB_CPCAP_SHIM_H
#define ENCLAB_CPCAP_SHIM_H
/* libpcap (Debian's libpcap0.8-dev): `enclab rtp pack` writes captures with pcap_open_dead + pcap_dump_open,
   `enclab rtp unpack` reads pcap and pcapng with pcap_open_offline. */
#include <pcap/pcap.h>

/* pcap_dump's first parameter is a u_char * "user" pointer (it is a pcap_handler); Swift would need an unsafe cast
   of the dumper to call it: this takes the dumper's own type. */
static inline void enclab_pcap_dump(pcap_dumper_t *dumper, const struct pcap_pkthdr *header, const u_char *bytes) {
    pcap_dump((u_char *)dumper, header, bytes);
}

/* DLT_RAW is 12 on Linux but 14 on OpenBSD (dlt.h); the value this libpcap gives LINKTYPE_RAW captures. */
static inline int enclab_dlt_raw(void) { return DLT_RAW; }

#endif
